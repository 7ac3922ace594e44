"""Operator actions: each calls the owning app's service and writes one audit event in the
same transaction, so an action and its record stand or fall together."""

from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from board import services as board
from board.models import Entry, PostingPolicy, Principal
from board.retention import holds
from board.retention import policies as retention
from maintenance import purges as maintenance
from maintenance.batches import Batch, PurgeResult, run_batches
from maintenance.deliveries import actions, endpoints
from maintenance.deliveries.attempts import host_of
from maintenance.deliveries.models import Delivery, Endpoint
from moderation.models import AuditEvent

COMMAND_LINE = "command-line"


class ReasonRequired(ValueError):
    pass


def audit_record(
    *,
    actor: str,
    action: str,
    target_type: str = "",
    target_ids: list | None = None,
    reason: str = "",
    details: dict | None = None,
    now: datetime | None = None,
) -> AuditEvent:
    return AuditEvent.objects.create(
        created_at=now or timezone.now(),
        actor=actor,
        action=action,
        target_type=target_type,
        target_ids=target_ids or [],
        reason=reason,
        details=details or {},
    )


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ReasonRequired("a reason is required for this action")
    return reason


def token_issue(
    *, actor: str, name: str, hourly_limit: int | None = None,
    entry_retention: int | None = None,
) -> tuple[Principal, str]:
    """`entry_retention` in seconds, within the entry policy's bounds (else PolicyRefused,
    and no token is issued): set as `retention_set` sets it, and audited as that is, with
    the value in force before and after (SPEC 8.1)."""
    with transaction.atomic():
        principal, token = board.token_issue(name=name, hourly_limit=hourly_limit)
        details = {"name": name, "hourly_limit": hourly_limit, "prefix": token[:12]}
        if entry_retention is not None:
            details["entry_retention"] = entry_retention
        audit_record(
            actor=actor,
            action="token_issue",
            target_type="principal",
            target_ids=[principal.pk],
            details=details,
        )
        if entry_retention is not None:
            retention_set(
                actor=actor, policy=retention.ENTRY, seconds=entry_retention, principal=name
            )
            principal.refresh_from_db(fields=["entry_retention"])
    return principal, token


# --- Retention policies and holds (SPEC 8.1, 8.2) ---------------------------------------


def retention_set(
    *, actor: str, policy: str, seconds: int, principal: str | None = None, reason: str = ""
) -> retention.Change:
    """Set a policy's console value (or a principal's own entry retention), audited with
    the value in force before and after, in seconds, with their sources."""
    with transaction.atomic():
        change = retention.retention_set(policy=policy, seconds=seconds, principal=principal)
        audit_record(
            actor=actor, action="retention_set", target_type="retention", reason=reason,
            details=change.details(),
        )
    return change


def retention_clear(
    *, actor: str, policy: str, principal: str | None = None, reason: str = ""
) -> retention.Change:
    with transaction.atomic():
        change = retention.retention_clear(policy=policy, principal=principal)
        audit_record(
            actor=actor, action="retention_clear", target_type="retention", reason=reason,
            details=change.details(),
        )
    return change


def hold_add(
    *, actor: str, reason: str, thread_id: int | None = None, principal: str | None = None,
    now: datetime | None = None,
):
    now = now or timezone.now()
    with transaction.atomic():
        hold = holds.hold_add(
            actor=actor, reason=reason, now=now, thread_id=thread_id, principal=principal
        )
        audit_record(
            actor=actor, action="hold_add", target_type="hold", target_ids=[hold.pk],
            reason=hold.reason, now=now,
            details={"thread": hold.thread_id, "principal": principal},
        )
    return hold


def hold_release(*, actor: str, hold_id: int, reason: str, now: datetime | None = None):
    now = now or timezone.now()
    with transaction.atomic():
        hold = holds.hold_release(hold_id=hold_id, actor=actor, reason=reason, now=now)
        audit_record(
            actor=actor, action="hold_release", target_type="hold", target_ids=[hold.pk],
            reason=hold.release_reason, now=now,
            details={
                "thread": hold.thread_id,
                "principal": hold.principal.name if hold.principal else None,
            },
        )
    return hold


class UnknownAgent(ValueError):
    """A name no principal has: refused, and nothing is audited."""


def token_revoke(*, actor: str, name: str, reason: str = "") -> int:
    """Revoke every live token of the agent NAME (UnknownAgent when there is none)."""
    with transaction.atomic():
        principal = Principal.objects.filter(name=name).first()
        if principal is None:
            raise UnknownAgent(f"no agent is named {name!r}")
        revoked = board.token_revoke(name=name)
        audit_record(
            actor=actor,
            action="token_revoke",
            target_type="principal",
            target_ids=[principal.pk],
            reason=reason,
            details={"name": name, "revoked": revoked},
        )
    return revoked


def posting_pause(*, actor: str, reason: str) -> PostingPolicy:
    reason = _require_reason(reason)
    with transaction.atomic():
        policy = board.posting_pause(reason=reason)
        audit_record(actor=actor, action="posting_pause", target_type="posting", reason=reason)
    return policy


def posting_resume(*, actor: str, reason: str) -> PostingPolicy:
    reason = _require_reason(reason)
    with transaction.atomic():
        policy = board.posting_resume(reason=reason)
        audit_record(actor=actor, action="posting_resume", target_type="posting", reason=reason)
    return policy


def posting_set_limits(
    *,
    actor: str,
    source_hourly_limit: int | None,
    overall_hourly_limit: int | None,
    reason: str = "",
) -> PostingPolicy:
    with transaction.atomic():
        policy = board.posting_set_limits(
            source_hourly_limit=source_hourly_limit, overall_hourly_limit=overall_hourly_limit
        )
        audit_record(
            actor=actor,
            action="posting_limits",
            target_type="posting",
            reason=reason,
            details={
                "source_hourly_limit": source_hourly_limit,
                "overall_hourly_limit": overall_hourly_limit,
            },
        )
    return policy


def entry_hide(*, actor: str, entry_id: int, reason: str) -> Entry:
    return _entry_set_visible(actor=actor, entry_id=entry_id, reason=reason, visible=False)


def entry_unhide(*, actor: str, entry_id: int, reason: str) -> Entry:
    return _entry_set_visible(actor=actor, entry_id=entry_id, reason=reason, visible=True)


def _entry_set_visible(*, actor: str, entry_id: int, reason: str, visible: bool) -> Entry:
    reason = _require_reason(reason)
    with transaction.atomic():
        entry = board.entry_set_visible(entry_id=entry_id, visible=visible)
        audit_record(
            actor=actor,
            action="entry_unhide" if visible else "entry_hide",
            target_type="entry",
            target_ids=[entry.pk],
            reason=reason,
        )
    return entry


def entry_delete(*, actor: str, entry_id: int, reason: str) -> Entry:
    reason = _require_reason(reason)
    with transaction.atomic():
        entry = board.entry_delete(entry_id=entry_id)
        audit_record(
            actor=actor,
            action="entry_delete",
            target_type="entry",
            target_ids=[entry.pk],
            reason=reason,
        )
    return entry


def audit_purge(
    *,
    now: datetime,
    batch_size: int,
    time_budget: timedelta | None = None,
    dry_run: bool = False,
    enough: Callable[[dict[str, int]], bool] | None = None,
) -> PurgeResult:
    """Remove audit events older than `SETTLE_AUDIT_RETENTION` (a year), in batches, and
    the login failure log past a day: it counts failures of the last half hour only
    (moderation/access/throttling.py); the audit events keep them for the year."""
    from axes.models import AccessFailureLog

    def batch(after) -> Batch:
        old = AuditEvent.objects.filter(
            created_at__lt=now - settings.SETTLE_AUDIT_RETENTION
        ).order_by("created_at")[:batch_size]
        ids = list(old.select_for_update(skip_locked=True).values_list("id", flat=True))
        removed = AuditEvent.objects.filter(id__in=ids).delete()[0] if ids else 0
        failures = list(
            AccessFailureLog.objects.filter(attempt_time__lt=now - timedelta(days=1))
            .values_list("id", flat=True)[:batch_size]
        )
        if failures:
            AccessFailureLog.objects.filter(id__in=failures).delete()
        more = len(ids) == batch_size or len(failures) == batch_size
        return Batch(counts={"audit_events": removed}, more=more)

    return run_batches(
        job="purge-audit-events",
        keys=["audit_events"],
        batch=batch,
        time_budget=settings.SETTLE_PURGE_TIME_BUDGET if time_budget is None else time_budget,
        dry_run=dry_run,
        enough=enough,
    )


def retention_run_now(*, actor: str, reason: str = "") -> list[str]:
    """Queue every purge for the worker now (the console's `Run purge now`).

    Queued first and audited after, outside any transaction: the broker is a network
    call, and an action the broker refused is not one to record as done.
    """
    jobs = maintenance.purge_enqueue_all()
    audit_record(
        actor=actor,
        action="purge_run_now",
        target_type="maintenance",
        reason=reason,
        details={"jobs": jobs},
    )
    return jobs


# --- Endpoints and deliveries (SPEC 9) ----------------------------------------------------
# The rules live in maintenance.deliveries (endpoints, actions); these add the audit event.
# Actions that make a
# request (send test, resend, reconcile) run with no transaction open and are audited
# after, with what they came to; the others change state and audit in one transaction.
# A refusal (maintenance.exceptions.DeliveryRefused) changes nothing and audits nothing.
# Audit details never hold a secret or a URL's path or query.


def _endpoint_details(endpoint: Endpoint, **extra) -> dict:
    return {
        "name": endpoint.name,
        "url": endpoints.endpoint_display_url(endpoint, full=False),
        **extra,
    }


def endpoint_add(
    *,
    actor: str,
    name: str,
    url: str,
    supports: str = "none",
    lookup_url: str | None = None,
    allow_private: bool = False,
    reason: str = "",
) -> tuple[Endpoint, str]:
    if allow_private:
        reason = _require_reason(reason)
    with transaction.atomic():
        endpoint, secret = endpoints.endpoint_add(
            name=name, url=url, supports=supports, lookup_url=lookup_url,
            allow_private=allow_private, private_reason=reason if allow_private else "",
        )
        audit_record(
            actor=actor, action="endpoint_add", target_type="endpoint",
            target_ids=[endpoint.pk], reason=reason,
            details=_endpoint_details(
                endpoint, supports=endpoint.supports, allow_private=endpoint.allow_private,
                **_allowance_details(endpoint),
            ),
        )
    return endpoint, secret


def _allowance_details(endpoint: Endpoint) -> dict:
    # The allowance covers one host: the audit event names it.
    if not endpoint.allow_private:
        return {}
    return {"allow_private_host": host_of(endpoint.url)}


def endpoint_set_url(
    *, actor: str, name: str, url: str, lookup_url: str | None = None,
    allow_private: bool = False, reason: str = "",
) -> tuple[Endpoint, bool]:
    if allow_private:
        reason = _require_reason(reason)
    with transaction.atomic():
        endpoint, withdrawn = endpoints.endpoint_set_url(
            name=name, url=url, lookup_url=lookup_url, allow_private=allow_private,
            private_reason=reason if allow_private else "",
        )
        audit_record(
            actor=actor, action="endpoint_set_url", target_type="endpoint",
            target_ids=[endpoint.pk], reason=reason,
            details=_endpoint_details(
                endpoint, allow_private=endpoint.allow_private,
                allowance_withdrawn=withdrawn, **_allowance_details(endpoint),
            ),
        )
    return endpoint, withdrawn


def endpoint_disable(*, actor: str, name: str, reason: str = "") -> Endpoint:
    with transaction.atomic():
        endpoint = endpoints.endpoint_disable(name=name, reason=reason)
        audit_record(
            actor=actor, action="endpoint_disable", target_type="endpoint",
            target_ids=[endpoint.pk], reason=reason, details=_endpoint_details(endpoint),
        )
    return endpoint


def endpoint_enable(*, actor: str, name: str, reason: str = "") -> Endpoint:
    with transaction.atomic():
        endpoint = endpoints.endpoint_enable(name=name)
        audit_record(
            actor=actor, action="endpoint_enable", target_type="endpoint",
            target_ids=[endpoint.pk], reason=reason, details=_endpoint_details(endpoint),
        )
    return endpoint


def endpoint_rotate(*, actor: str, name: str, reason: str = "") -> tuple[Endpoint, str]:
    with transaction.atomic():
        endpoint, secret = endpoints.endpoint_rotate(name=name)
        audit_record(
            actor=actor, action="endpoint_rotate", target_type="endpoint",
            target_ids=[endpoint.pk], reason=reason, details=_endpoint_details(endpoint),
        )
    return endpoint, secret


def endpoint_send_test(*, actor: str, name: str, reason: str = "") -> endpoints.TestResult:
    result = endpoints.endpoint_send_test(name=name)
    endpoint = Endpoint.objects.get(name=name)
    audit_record(
        actor=actor, action="endpoint_send_test", target_type="endpoint",
        target_ids=[endpoint.pk], reason=reason,
        details=_endpoint_details(
            endpoint, status_code=result.status_code, error=result.error,
            lookup_status_code=result.lookup_status_code,
        ),
    )
    return result


def _delivery_audit(*, actor: str, action: str, delivery: Delivery, reason: str = "",
                    before: str) -> None:
    audit_record(
        actor=actor, action=action, target_type="delivery", target_ids=[str(delivery.pk)],
        reason=reason,
        details={
            "endpoint": delivery.endpoint.name, "entry_id": delivery.entry_id,
            "from": before, "to": delivery.state,
        },
    )


def _state_of(delivery_id) -> str:
    from maintenance.deliveries.selectors import delivery_get

    found = delivery_get(delivery_id)
    return found.state if found else ""


def delivery_reconcile(*, actor: str, delivery_id, reason: str = "") -> Delivery:
    before = _state_of(delivery_id)
    delivery = actions.delivery_reconcile(delivery_id=delivery_id)
    _delivery_audit(actor=actor, action="delivery_reconcile", delivery=delivery,
                    reason=reason, before=before)
    return delivery


def delivery_resend(*, actor: str, delivery_id, reason: str = "") -> Delivery:
    before = _state_of(delivery_id)
    delivery = actions.delivery_resend(delivery_id=delivery_id)
    _delivery_audit(actor=actor, action="delivery_resend", delivery=delivery,
                    reason=reason, before=before)
    return delivery


def delivery_cancel(*, actor: str, delivery_id, reason: str = "") -> Delivery:
    with transaction.atomic():
        before = _state_of(delivery_id)
        delivery = actions.delivery_cancel(delivery_id=delivery_id, reason=reason)
        _delivery_audit(actor=actor, action="delivery_cancel", delivery=delivery,
                        reason=reason, before=before)
    return delivery


def delivery_mark(*, actor: str, delivery_id, state: str, reason: str) -> Delivery:
    with transaction.atomic():
        before = _state_of(delivery_id)
        delivery = actions.delivery_mark(delivery_id=delivery_id, state=state, reason=reason)
        _delivery_audit(actor=actor, action=f"delivery_mark_{state}", delivery=delivery,
                        reason=reason.strip(), before=before)
    return delivery
