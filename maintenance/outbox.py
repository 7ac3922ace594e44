"""Outbound deliveries: the outbox written with the entry, and the one layer that retries.

Design note
-----------
Telling a webhook endpoint about a new entry is the one side effect Settle has outside
its own database, so it is the one place where an outcome can be truly unknown: a
request may have landed when its answer was lost. The mechanism is built so that every
such moment leaves a row someone can inspect, and so that nothing claims more than it
knows.

* **Outbox in the entry's transaction.** `board` asks for `entry_companions` inside the
  transaction that creates an entry (a replay asks nothing); the receiver here answers
  with one `INSERT ... SELECT` of a `Delivery` per enabled endpoint, which the engine
  runs in the entry's own statement on PostgreSQL, so the entry and its deliveries
  commit together or not at all, in no extra round trip. The send task is queued on
  commit, and a broker outage only costs a log line: the minute sweep finds what is due.
* **Intent before the side effect.** An attempt first wins a compare-and-set from
  `accepted` to `running` (writing its own attempt id and a lease ending at database
  time now + timeout + margin) and inserts its attempt row, in one short transaction;
  only then does the request leave, with no transaction open. A worker that dies
  leaves a `running` row whose lease ends; the sweep then treats it as "the request
  left and no answer came".
* **Every change is a compare-and-set** on (state, current attempt), so a late result
  never overwrites an operator's decision, and a redelivered or duplicated task finds
  the state moved on and does nothing: Celery is a doorbell, not a retry layer.
* **What happens after an ambiguous send** depends on what the receiver supports
  (SPEC 9): `dedupe` gets the next attempt with the same id, `lookup` is asked first,
  `none` goes to `outcome_unknown` for an operator. Cancelling never claims `cancelled`
  for something that may have been sent.
* **One clock per question.** Leases and due times compare against the database's
  `now`; an attempt's own budget uses the monotonic clock (maintenance.webhooks).

The request itself (address rules, signing, the watchdog) is `maintenance.webhooks`;
operator actions are `maintenance.deliveries`; reads are `maintenance.selectors`.
"""

import functools
import json
import logging
import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Case, DateTimeField, ExpressionWrapper, F, Q, Value, When
from django.db.models.functions import Now
from django.utils import timezone

from board.models import Entry
from board.schemas import public_entry_object, timestamp
from maintenance import webhooks
from maintenance.doorbell import Doorbell
from maintenance.models import Delivery, DeliveryAttempt, Endpoint, MaintenanceRun
from receipts.services import Companion

log = logging.getLogger(__name__)

S = Delivery.State
K = DeliveryAttempt.Kind
# Retried like a 5xx: the receiver may accept the same notice later (SPEC 9's table).
RETRYABLE_4XX = {408, 409, 425, 429}
# Under this, the next attempt is a task countdown; above, beat's sweep picks it up.
COUNTDOWN_LIMIT = timedelta(minutes=1)
# A lookup that got no usable answer is tried again on the next run of the sweep.
LOOKUP_AGAIN_AFTER = timedelta(minutes=1)
SWEEP_BATCH = 500


def _schedule() -> list[timedelta]:
    return settings.SETTLE_DELIVERY_SCHEDULE


def _jittered(delay: timedelta) -> timedelta:
    # ±20 %, so deliveries that failed together do not come back together.
    return delay * random.uniform(0.8, 1.2)


# --- The outbox -------------------------------------------------------------------------

# A random (version 4) UUID made by SQLite itself, which has no uuid function; stored as
# Django stores UUIDs there, 32 hex digits (`%%` because the statement has parameters).
_SQLITE_UUID4 = (
    "lower(hex(randomblob(4)) || hex(randomblob(2)) || '4' || substr(hex(randomblob(2)), 2)"
    " || substr('89ab', 1 + (abs(random()) %% 4), 1) || substr(hex(randomblob(2)), 2)"
    " || hex(randomblob(6)))"
)


def outbox_companion(sender, *, now: datetime, **kwargs) -> Companion:
    """`board.signals.entry_companions`: one accepted delivery per enabled endpoint,
    written with the new entry (in the entry's own statement on PostgreSQL: the issue's
    budget allowed one `INSERT ... SELECT` more, and this makes it none). The send is
    rung for on commit; the doorbell publishes it with others' within milliseconds."""
    field = Delivery._meta.get_field
    first = _jittered(_schedule()[0])

    def made(ids: list) -> None:
        if ids:
            ids = [uuid.UUID(str(value)) for value in ids]
            transaction.on_commit(lambda: doorbell.ring(ids, delay=first))

    return Companion(
        table=connection.ops.quote_name(Delivery._meta.db_table),
        columns=_OUTBOX_COLUMNS,
        link="entry_id",
        rows_sql=_outbox_rows_sql(connection.vendor),
        params=(
            S.ACCEPTED.value,
            False,
            False,
            field("next_attempt_at").get_db_prep_save(now + _schedule()[0], connection),
            field("deadline_at").get_db_prep_save(
                now + settings.SETTLE_DELIVERY_DEADLINE, connection
            ),
            field("created_at").get_db_prep_save(now, connection),
            True,
        ),
        returning="id",
        made=made,
    )


_OUTBOX_COLUMNS = (
    "id", "endpoint_id", "state", "attempts", "unanswered", "lookup_due", "note",
    "next_attempt_at", "deadline_at", "created_at",
)


@functools.cache
def _outbox_rows_sql(vendor: str) -> str:
    new_id = "gen_random_uuid()" if vendor == "postgresql" else _SQLITE_UUID4
    endpoints = connection.ops.quote_name(Endpoint._meta.db_table)
    return (
        f"SELECT {new_id}, id, %s, 0, %s, %s, '', %s, %s, %s "
        f"FROM {endpoints} WHERE enabled = %s"
    )


def on_entry_deleted(sender, *, entry: Entry, now: datetime, **kwargs) -> None:
    """`board.signals.entry_deleted`: the cancel rule, in the deletion's transaction."""
    deliveries_cancel_for_entry(entry_id=entry.pk, now=now, note="entry deleted")


def deliveries_enqueue(ids: list[uuid.UUID], *, delay: timedelta = timedelta(0)) -> int:
    """Queue the send for these deliveries; returns how many were queued.

    One message whatever the number of deliveries (the worker fans it out): the write
    path's doorbell sends one for all it was rung for within its window. Never raises: a
    broker that is down must not fail a post that is already saved; the delivery is
    `accepted` with its due time stored, so the minute sweep sends it.
    """
    from maintenance.tasks import deliveries_send, delivery_send

    if not ids or delay >= COUNTDOWN_LIMIT:
        return 0  # the sweep sends it when it is due
    countdown = max(delay.total_seconds(), 0)
    try:
        if len(ids) == 1:
            delivery_send.apply_async(args=[str(ids[0])], countdown=countdown, retry=False)
        else:
            deliveries_send.apply_async(
                args=[[str(pk) for pk in ids]], countdown=countdown, retry=False
            )
    except Exception as error:  # any broker failure: the sweep is the fallback
        log.warning("delivery not queued (%s); the sweep will send it", type(error).__name__)
        return 0
    return len(ids)


doorbell = Doorbell(lambda ids, delay: deliveries_enqueue(ids, delay=delay))


# --- Cancelling -------------------------------------------------------------------------


def _cancel_rule_state() -> Case:
    # `accepted`: cancelled only if nothing sent earlier may have landed.
    return Case(
        When(unanswered=True, then=Value(S.OUTCOME_UNKNOWN.value)),
        default=Value(S.CANCELLED.value),
    )


def _settled_unless_unknown(now: datetime) -> Case:
    return Case(
        When(unanswered=True, then=Value(None, output_field=DateTimeField())),
        default=Value(now, output_field=DateTimeField()),
        output_field=DateTimeField(),
    )


def deliveries_cancel_for_entry(*, entry_id: int, now: datetime, note: str) -> int:
    """Apply the cancel rule to an entry's accepted and running deliveries."""
    return deliveries_cancel_for_entries(entry_ids=[entry_id], now=now, note=note)


def on_entries_deleted(sender, *, entry_ids: list[int], now: datetime, **kwargs) -> None:
    """`board.signals.entries_deleted`: the cancel rule for a batch, in its transaction."""
    deliveries_cancel_for_entries(entry_ids=entry_ids, now=now, note="entry deleted")


def deliveries_cancel_for_entries(*, entry_ids: list[int], now: datetime, note: str) -> int:
    """Apply the cancel rule to these entries' accepted and running deliveries."""
    settled = Delivery.objects.filter(entry_id__in=entry_ids, state=S.ACCEPTED).update(
        state=_cancel_rule_state(), note=note,
        settled_at=_settled_unless_unknown(now),
        next_attempt_at=None,
    )
    asked = Delivery.objects.filter(entry_id__in=entry_ids, state=S.RUNNING).update(
        state=S.CANCEL_REQUESTED, note=note
    )
    return settled + asked


def delivery_cancel_one(delivery: Delivery, *, now: datetime, note: str) -> bool:
    """The cancel rule on one delivery, as a compare-and-set; False if it moved on."""
    same = Q(pk=delivery.pk, state=delivery.state, current_attempt=delivery.current_attempt)
    if delivery.state == S.ACCEPTED:
        final = S.OUTCOME_UNKNOWN if delivery.unanswered else S.CANCELLED
        return Delivery.objects.filter(same).update(
            state=final, note=note, next_attempt_at=None,
            settled_at=None if final == S.OUTCOME_UNKNOWN else now,
        ) == 1
    if delivery.state == S.RUNNING:
        return Delivery.objects.filter(same).update(state=S.CANCEL_REQUESTED, note=note) == 1
    return False


# --- One attempt ------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """An attempt that won its compare-and-set and may now leave the process."""

    delivery_id: uuid.UUID
    attempt_id: uuid.UUID
    kind: str
    timeout: float


def delivery_body(entry: Entry) -> bytes:
    """The notice, built from the entry as it is now: the same bytes while it is unchanged."""
    payload = {
        "type": "entry.created",
        "timestamp": timestamp(entry.created_at),
        "data": public_entry_object(entry, settings.SETTLE_PUBLIC_URL),
    }
    return json.dumps(payload, separators=(",", ":")).encode()


def live_secrets(endpoint: Endpoint, now: datetime) -> list[str]:
    secrets = [endpoint.secret]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret and expires and expires > now:
        secrets.append(endpoint.previous_secret)
    return secrets


def _claim(
    delivery: Delivery, *, kind: str, timeout: timedelta, count: bool
) -> Claim | None:
    """`accepted`/`outcome_unknown` → `running`, with the attempt row, before any request."""
    attempt_id = uuid.uuid4()
    margin = settings.SETTLE_DELIVERY_LEASE_MARGIN
    lease = ExpressionWrapper(Now() + (timeout + margin), output_field=DateTimeField())
    with transaction.atomic():
        won = Delivery.objects.filter(
            pk=delivery.pk, state=delivery.state, current_attempt=delivery.current_attempt
        ).update(
            state=S.RUNNING,
            current_attempt=attempt_id,
            lease_expires_at=lease,
            attempts=F("attempts") + (1 if count else 0),
        )
        if won != 1:
            return None
        DeliveryAttempt.objects.create(
            attempt_id=attempt_id, delivery_id=delivery.pk, kind=kind,
            started_at=timezone.now(),
        )
    return Claim(
        delivery_id=delivery.pk, attempt_id=attempt_id, kind=kind,
        timeout=timeout.total_seconds(),
    )


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def allowance_covers(endpoint: Endpoint, url: str) -> bool:
    """Whether the endpoint's private-address allowance lifts the address rule for `url`:
    only for the one host it was given for, the endpoint URL's host, whatever the port.
    A lookup URL on any other host is vetted as if there were no allowance."""
    if not endpoint.allow_private:
        return False
    host = host_of(url)
    return bool(host) and host == host_of(endpoint.url)


def _request(claim: Claim, endpoint: Endpoint, body: bytes | None) -> webhooks.Answer:
    now = timezone.now()
    lookup = claim.kind in (K.LOOKUP, K.RECONCILE)
    url = endpoint.url
    if lookup:
        url = webhooks.lookup_url(endpoint.lookup_url, str(claim.delivery_id))
    payload = b"" if lookup else body
    headers = webhooks.signed_headers(
        message_id=str(claim.delivery_id), secrets=live_secrets(endpoint, now), body=payload
    )
    if lookup:
        headers.pop("Content-Type")
    return webhooks.request(
        method="GET" if lookup else "POST", url=url, headers=headers, body=payload,
        timeout=claim.timeout, allow_private=allowance_covers(endpoint, url),
    )


def _kind_of(answer: webhooks.Answer) -> str:
    """ok, refused (a 4xx never retried), retry (answered or never sent), lost."""
    code = answer.status_code
    if code is None:
        return "lost" if answer.request_left else "retry"
    if 200 <= code < 300:
        return "ok"
    if 400 <= code < 500 and code not in RETRYABLE_4XX:
        return "refused"
    return "retry"


# What an attempt came to when its answer could not be used (or handling it failed).
UNUSABLE = webhooks.Answer(
    status_code=None, error="internal_error", request_left=True, duration_ms=0
)
LEASE_ENDED = webhooks.Answer(
    status_code=None, error="lease_ended", request_left=True, duration_ms=0
)


def _next_due(delivery: Delivery, now: datetime, retry_after: float | None) -> datetime | None:
    """When the next attempt of the schedule goes, or None when schedule or deadline
    has run out. `delivery.attempts` already counts the attempt that just ended."""
    schedule = _schedule()
    if delivery.attempts >= len(schedule):
        return None
    delay = _jittered(schedule[delivery.attempts])
    if retry_after is not None:
        # Honoured when it fits the deadline; a receiver asking for more time than is
        # left is not sent to against its word, so the schedule has run out.
        if now + timedelta(seconds=retry_after) >= delivery.deadline_at:
            return None
        delay = max(delay, timedelta(seconds=retry_after))
    due = now + delay
    return due if due < delivery.deadline_at else None


def _decide(delivery: Delivery, kind: str, answer: webhooks.Answer, now: datetime) -> dict:
    """The fields the attempt's result sets (SPEC 9's state table)."""
    cancelling = delivery.state == S.CANCEL_REQUESTED
    result = _kind_of(answer)
    unanswered = delivery.unanswered or result == "lost"
    final = {"next_attempt_at": None, "lookup_due": False}

    if kind in (K.LOOKUP, K.RECONCILE):
        if answer.status_code == 200:
            return {**final, "state": S.SUCCEEDED}
        if answer.status_code == 404 and kind == K.RECONCILE:
            return {**final, "state": S.FAILED, "note": "lookup: never received"}
        if answer.status_code == 404:
            # Never received: the earlier send did not land, so nothing is ambiguous now.
            if cancelling:
                return {**final, "state": S.CANCELLED, "unanswered": False}
            if delivery.attempts < len(_schedule()):
                return {**final, "state": S.ACCEPTED, "unanswered": False, "next_attempt_at": now}
            return {**final, "state": S.FAILED, "unanswered": False}
        if kind == K.RECONCILE or cancelling:
            return {**final, "state": S.OUTCOME_UNKNOWN}
        again = now + LOOKUP_AGAIN_AFTER
        if again >= delivery.deadline_at:
            return {**final, "state": S.OUTCOME_UNKNOWN}
        return {"state": S.ACCEPTED, "lookup_due": True, "next_attempt_at": again}

    if result == "ok":
        return {**final, "state": S.SUCCEEDED}
    if result == "refused":
        return {**final, "state": S.FAILED}
    if kind == K.RESEND:
        return {**final, "state": S.OUTCOME_UNKNOWN}
    if cancelling:
        return {**final, "state": S.OUTCOME_UNKNOWN if unanswered else S.CANCELLED}

    supports = delivery.endpoint.supports
    if result == "lost" and supports == Endpoint.Supports.NONE:
        return {**final, "state": S.OUTCOME_UNKNOWN, "unanswered": True}
    due = _next_due(delivery, now, answer.retry_after)
    if result == "lost" and supports == Endpoint.Supports.LOOKUP:
        # Asked before anything is sent again: at the next attempt's time, or at once
        # when the schedule has no attempt left (a 404 then ends it `failed`).
        due = due or now + LOOKUP_AGAIN_AFTER
        if due >= delivery.deadline_at:
            return {**final, "state": S.OUTCOME_UNKNOWN, "unanswered": True}
        return {"state": S.ACCEPTED, "unanswered": True, "lookup_due": True,
                "next_attempt_at": due}
    if due is None:
        return {**final, "state": S.OUTCOME_UNKNOWN if unanswered else S.FAILED,
                "unanswered": unanswered}
    return {"state": S.ACCEPTED, "unanswered": unanswered, "next_attempt_at": due}


def _settle(claim_id: uuid.UUID, attempt_id: uuid.UUID, kind: str, answer: webhooks.Answer,
            *, now: datetime | None = None) -> Delivery | None:
    """Write an attempt's result, if the delivery still waits for this attempt."""
    now = now or timezone.now()
    for _ in range(3):
        delivery = Delivery.objects.select_related("endpoint").filter(
            pk=claim_id, current_attempt=attempt_id, state__in=[S.RUNNING, S.CANCEL_REQUESTED]
        ).first()
        if delivery is None:
            break  # an operator settled it meanwhile: their decision stands
        fields = _decide(delivery, kind, answer, now)
        if fields["state"] in Delivery.FINAL:
            fields["settled_at"] = now
        with transaction.atomic():
            won = Delivery.objects.filter(
                pk=claim_id, current_attempt=attempt_id, state=delivery.state
            ).update(lease_expires_at=None, **fields)
            if won != 1:
                continue  # cancelled while we decided: decide again with the new state
            _record_attempt(attempt_id, answer)
            _endpoint_health(delivery.endpoint, kind, answer, now)
        for field, value in fields.items():
            setattr(delivery, field, value)
        log.info(
            "delivery %s %s attempt: %s -> %s", claim_id, kind,
            answer.status_code or answer.error, delivery.state,
        )
        return delivery
    if answer is not LEASE_ENDED:
        # The operator's decision stands, but the evidence of what this attempt saw is
        # kept. (A lease the sweep ends after the worker settled changes nothing.)
        _record_attempt(attempt_id, answer)
    return None


def _record_attempt(attempt_id: uuid.UUID, answer: webhooks.Answer) -> None:
    DeliveryAttempt.objects.filter(attempt_id=attempt_id).update(
        duration_ms=answer.duration_ms if answer is not LEASE_ENDED else None,
        status_code=answer.status_code,
        error=answer.error,
        request_left=answer.request_left,
    )


def _endpoint_health(endpoint: Endpoint, kind: str, answer: webhooks.Answer, now: datetime):
    if kind not in (K.SEND, K.RESEND):
        return
    result = _kind_of(answer)
    if result == "ok":
        Endpoint.objects.filter(pk=endpoint.pk).update(last_success_at=now, failing_since=None)
        return
    Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(failing_since=now)
    if answer.status_code == 410:
        Endpoint.objects.filter(pk=endpoint.pk, enabled=True).update(
            enabled=False, disabled_at=now, updated_at=now,
            disabled_reason="the endpoint answered 410 Gone",
        )
        log.warning("endpoint %s disabled: it answered 410", endpoint.name)


def attempt_make(delivery: Delivery, *, kind: str, timeout: timedelta, count: bool,
                 body: bytes | None) -> Delivery | None:
    """Claim, send with no transaction open, settle. None when the claim was lost."""
    if connection.in_atomic_block:
        # SPEC 9: a request never leaves while a transaction is open (it would hold
        # locks, or commit the claim only after the request, for the whole timeout).
        raise RuntimeError("a delivery request must not be made inside a transaction")
    claim = _claim(delivery, kind=kind, timeout=timeout, count=count)
    if claim is None:
        return None
    try:
        answer = _request(claim, delivery.endpoint, body)
    except Exception as error:
        # A bug or an unexpected failure must not leave the row to its lease when we
        # know the request may have left: settle it as "left, no answer" now.
        log.error("delivery %s attempt failed unexpectedly: %s", claim.delivery_id,
                  type(error).__name__)
        answer = UNUSABLE
    try:
        return _settle(claim.delivery_id, claim.attempt_id, kind, answer)
    except Exception as error:
        # Settling what came back failed (an answer nothing foresaw, a bug): the attempt
        # is still settled, as "the request left, no usable answer", never left running.
        log.error("delivery %s attempt not settled as answered: %s", claim.delivery_id,
                  type(error).__name__)
        if answer is UNUSABLE:
            raise
        return _settle(claim.delivery_id, claim.attempt_id, kind, UNUSABLE)


# --- What the send task and the sweep do ------------------------------------------------


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
        settled = attempt_make(delivery, kind=K.LOOKUP, timeout=timeout, count=False, body=None)
    else:
        entry = Entry.objects.filter(pk=delivery.entry_id).first()
        if entry is None or not entry.is_public:
            delivery_cancel_one(delivery, now=now, note="entry no longer public")
            return Delivery.objects.get(pk=delivery.pk)
        if not settings.SETTLE_PUBLIC_URL:
            log.warning("delivery %s waits: SETTLE_PUBLIC_URL is not set", delivery.pk)
            return delivery
        settled = attempt_make(
            delivery, kind=K.SEND, timeout=timeout, count=True, body=delivery_body(entry)
        )
    if settled is not None and settled.state == S.ACCEPTED and settled.next_attempt_at:
        deliveries_enqueue([settled.pk], delay=settled.next_attempt_at - timezone.now())
    return settled


def deliveries_expire(*, now: datetime, ids: list | None = None) -> int:
    """Accepted deliveries past their deadline: `failed`, or `outcome_unknown` when an
    earlier attempt may have landed."""
    due = Delivery.objects.filter(state=S.ACCEPTED, deadline_at__lte=now)
    if ids is not None:
        due = due.filter(pk__in=ids)
    return due.update(
        state=_cancel_rule_state_expired(), next_attempt_at=None, lookup_due=False,
        settled_at=_settled_unless_unknown(now),
        note="deadline passed",
    )


def _cancel_rule_state_expired() -> Case:
    return Case(
        When(unanswered=True, then=Value(S.OUTCOME_UNKNOWN.value)),
        default=Value(S.FAILED.value),
    )


def leases_end(*, now: datetime) -> int:
    """Running attempts whose lease ended (their worker died or hung): "sent, no answer"."""
    ended = 0
    rows = Delivery.objects.filter(
        state__in=[S.RUNNING, S.CANCEL_REQUESTED], lease_expires_at__lt=Now()
    ).values_list("pk", "current_attempt")[:SWEEP_BATCH]
    for delivery_id, attempt_id in rows:
        kind = DeliveryAttempt.objects.filter(attempt_id=attempt_id).values_list(
            "kind", flat=True
        ).first() or K.SEND
        if _settle(delivery_id, attempt_id, kind, LEASE_ENDED, now=now) is not None:
            ended += 1
    return ended


def endpoints_disable_failing(*, now: datetime) -> int:
    """Endpoints with no success for SETTLE_ENDPOINT_DISABLE_AFTER since their first
    failure after the last success."""
    after = settings.SETTLE_ENDPOINT_DISABLE_AFTER
    failing = Endpoint.objects.filter(enabled=True, failing_since__lte=now - after)
    names = list(failing.values_list("name", flat=True))
    disabled = failing.update(
        enabled=False, disabled_at=now, updated_at=now,
        disabled_reason=f"no successful delivery for {_words(after)}",
    )
    for name in names:
        log.warning("endpoint %s disabled: no success for %s", name, _words(after))
    return disabled


def _words(duration: timedelta) -> str:
    from maintenance.selectors import describe_duration

    return describe_duration(duration)


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
        "leases_ended": leases_end(now=now),
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
