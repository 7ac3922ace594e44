"""What the send task and beat's minute sweep do: one delivery's due step (a send or a
lookup) and what follows it, and the sweep over ended leases, deadlines, failing endpoints
and what is due. Tasks (`maintenance.deliveries.tasks`) and `manage.py deliveries run`
call these; nothing here knows it runs under Celery.
"""

import logging
import math
import uuid
from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models.functions import Now
from django.utils import timezone

from board.models import Entry
from maintenance.deliveries import attempts
from maintenance.deliveries.doorbell import deliveries_enqueue
from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint
from maintenance.models import MaintenanceRun
from maintenance.selectors import describe_duration

# The deliveries' logger keeps the name operators' filters and alerts know.
log = logging.getLogger("maintenance.outbox")

S = Delivery.State
K = DeliveryAttempt.Kind
SWEEP_BATCH = 500


def delivery_run(*, delivery_id: uuid.UUID | str) -> Delivery | None:
    """Do what is due now for one delivery (a send or a lookup), and schedule what follows.

    Safe to call any number of times: it acts only on an `accepted` delivery that is due,
    of an enabled endpoint, and only one caller wins the claim.
    """
    now = timezone.now()
    delivery = Delivery.objects.select_related("endpoint").filter(pk=delivery_id).first()
    if delivery is None or delivery.state != S.ACCEPTED or not delivery.endpoint.enabled:
        return delivery
    # A second of slack for a countdown that fires a little early.
    if delivery.next_attempt_at and delivery.next_attempt_at > now + timedelta(seconds=1):
        return delivery
    if delivery.deadline_at <= now:
        deliveries_expire(now=now, ids=[delivery.pk])
        return Delivery.objects.get(pk=delivery.pk)
    timeout = min(settings.SETTLE_DELIVERY_TIMEOUT, delivery.deadline_at - now)
    if delivery.lookup_due:
        settled = attempts.attempt_make(
            delivery, kind=K.LOOKUP, timeout=timeout, count=False, body=None
        )
    else:
        entry = Entry.objects.filter(pk=delivery.entry_id).first()
        if entry is None or not entry.is_public:
            delivery.cancel(now=now, note="entry no longer public")
            return Delivery.objects.get(pk=delivery.pk)
        if not settings.SETTLE_PUBLIC_URL:
            log.warning("delivery %s waits: SETTLE_PUBLIC_URL is not set", delivery.pk)
            return delivery
        settled = attempts.attempt_make(
            delivery, kind=K.SEND, timeout=timeout, count=True,
            body=attempts.delivery_body(entry),
        )
    next_attempt_queued(settled)
    return settled


def next_attempt_queued(settled: Delivery | None) -> None:
    """After an attempt ended: a next attempt due within a minute is a task countdown
    (SPEC 9), a later one waits for the sweep (`deliveries_enqueue` decides)."""
    if settled is not None and settled.state == S.ACCEPTED and settled.next_attempt_at:
        deliveries_enqueue([settled.pk], delay=settled.next_attempt_at - timezone.now())


def next_attempts_queued(settled: list[Delivery]) -> None:
    """`next_attempt_queued` for many, one message for each delay in whole seconds (the
    schedule's delays repeat): the sweep's publishes are not one per delivery. Those due
    already are left to the sweep's own due pass."""
    by_delay: dict[int, list] = defaultdict(list)
    now = timezone.now()
    for delivery in settled:
        if delivery.state == S.ACCEPTED and delivery.next_attempt_at:
            delay = (delivery.next_attempt_at - now).total_seconds()
            if delay > 0:
                by_delay[math.ceil(delay)].append(delivery.pk)
    for seconds, ids in by_delay.items():
        deliveries_enqueue(ids, delay=timedelta(seconds=seconds))


def deliveries_expire(*, now: datetime, ids: list | None = None) -> int:
    """Accepted deliveries past their deadline: `failed`, or `outcome_unknown` when an
    earlier attempt may have landed."""
    rows = Delivery.objects.all() if ids is None else Delivery.objects.filter(pk__in=ids)
    return rows.expire(now=now)


def leases_end(*, now: datetime, queue_next: bool = True) -> int:
    """Running attempts whose lease ended (their worker died or hung): "sent, no answer".
    The next attempt of each is queued as any attempt's is (`next_attempt_queued`), unless
    `queue_next` is off: `deliveries run` makes what is due itself."""
    ended: list[Delivery] = []
    rows = Delivery.objects.filter(
        state__in=[S.RUNNING, S.CANCEL_REQUESTED], lease_expires_at__lt=Now()
    ).values_list("pk", "current_attempt")[:SWEEP_BATCH]
    for delivery_id, attempt_id in rows:
        kind = DeliveryAttempt.objects.filter(attempt_id=attempt_id).values_list(
            "kind", flat=True
        ).first() or K.SEND
        ended_now = attempts.attempt_settle(
            delivery_id, attempt_id, kind, attempts.LEASE_ENDED, now=now
        )
        if ended_now is not None:
            ended.append(ended_now)
    if queue_next:
        next_attempts_queued(ended)
    return len(ended)


def endpoints_disable_failing(*, now: datetime) -> int:
    """Endpoints with no success for SETTLE_ENDPOINT_DISABLE_AFTER since their first
    failure after the last success."""
    after = settings.SETTLE_ENDPOINT_DISABLE_AFTER
    failing = Endpoint.objects.filter(enabled=True, failing_since__lte=now - after)
    names = list(failing.values_list("name", flat=True))
    disabled = failing.update(
        enabled=False, disabled_at=now, updated_at=now,
        disabled_reason=f"no successful delivery for {describe_duration(after)}",
    )
    for name in names:
        log.warning("endpoint %s disabled: no success for %s", name, describe_duration(after))
    return disabled


def deliveries_due(*, now: datetime) -> list[uuid.UUID]:
    return list(
        Delivery.objects.filter(
            state=S.ACCEPTED, next_attempt_at__lte=now, deadline_at__gt=now,
            endpoint__enabled=True,
        )
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )


def deliveries_sweep(*, now: datetime | None = None, inline: bool = False) -> dict[str, int]:
    """Beat's minute: ended leases, deadlines, failing endpoints, then what is due.

    `inline` makes the due attempts here, in this process (`manage.py deliveries run`);
    otherwise they are queued for the worker.
    """
    now = now or timezone.now()
    counts = {
        "leases_ended": leases_end(now=now, queue_next=not inline),
        "expired": deliveries_expire(now=now),
        "endpoints_disabled": endpoints_disable_failing(now=now),
    }
    due = deliveries_due(now=now)
    if inline:
        failed = 0
        for delivery_id in due:
            try:
                delivery_run(delivery_id=delivery_id)
            except Exception as error:
                # One delivery's trouble never stops the others: its attempt, if one was
                # claimed, was settled by attempt_make, or its lease ends in the sweep.
                failed += 1
                log.error("delivery %s not handled: %s", delivery_id, type(error).__name__)
        counts["sent"] = len(due) - failed
        if failed:
            counts["errors"] = failed
    else:
        counts["queued"] = sum(deliveries_enqueue([pk]) for pk in due)
    return counts


def sweep_job() -> dict[str, int]:
    """The beat task: sweep, and record a maintenance run only if something changed."""
    started = timezone.now()
    counts = deliveries_sweep(now=started)
    if any(counts.values()):
        finished = timezone.now()
        MaintenanceRun.objects.create(
            job="deliveries-sweep", started_at=started, finished_at=finished,
            duration_seconds=round((finished - started).total_seconds(), 3), counts=counts,
        )
    return counts
