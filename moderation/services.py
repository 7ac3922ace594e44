"""Operator actions: each calls the owning app's service and writes one audit event in the
same transaction, so an action and its record stand or fall together."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from board import services as board
from board.models import Entry, PostingPolicy, Principal
from maintenance import services as maintenance
from maintenance.services import Batch, PurgeResult, run_batches
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


def token_issue(*, actor: str, name: str, hourly_limit: int | None = None) -> tuple[Principal, str]:
    with transaction.atomic():
        principal, token = board.token_issue(name=name, hourly_limit=hourly_limit)
        audit_record(
            actor=actor,
            action="token_issue",
            target_type="principal",
            target_ids=[principal.pk],
            details={"name": name, "hourly_limit": hourly_limit, "prefix": token[:12]},
        )
    return principal, token


def token_revoke(*, actor: str, name: str, reason: str = "") -> int:
    with transaction.atomic():
        revoked = board.token_revoke(name=name)
        principal = Principal.objects.filter(name=name).first()
        audit_record(
            actor=actor,
            action="token_revoke",
            target_type="principal",
            target_ids=[principal.pk] if principal else [],
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
) -> PurgeResult:
    """Remove audit events older than `SETTLE_AUDIT_RETENTION` (a year), in batches."""

    def batch(after) -> Batch:
        old = AuditEvent.objects.filter(
            created_at__lt=now - settings.SETTLE_AUDIT_RETENTION
        ).order_by("created_at")[:batch_size]
        ids = list(old.select_for_update(skip_locked=True).values_list("id", flat=True))
        removed = AuditEvent.objects.filter(id__in=ids).delete()[0] if ids else 0
        return Batch(counts={"audit_events": removed}, more=len(ids) == batch_size)

    return run_batches(
        job="purge-audit-events",
        keys=["audit_events"],
        batch=batch,
        time_budget=settings.SETTLE_PURGE_TIME_BUDGET if time_budget is None else time_budget,
        dry_run=dry_run,
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
