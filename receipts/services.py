"""The idempotency engine: one intended write, one effect, however often it is sent.

How a write runs (SPEC 5.1 step 3 and 7):

1. In one transaction, the request claims its identity `(scope, operation, request_id)`
   by inserting a receipt with `ON CONFLICT DO NOTHING`. The unique constraint is the
   lock: on PostgreSQL a second transaction with the same identity waits inside that
   INSERT until the first commits or rolls back (bounded by `lock_timeout`); on SQLite
   the whole transaction is `BEGIN IMMEDIATE`, so claims simply queue.
2. A request that lost the claim reads the committed receipt and is judged: deleted,
   expired, a conflict (named fields differ) or a replay. The attempt count is bumped
   and committed either way.
3. A request that won the claim checks for a tombstone *after* taking the identity, in
   the same transaction. A purge deletes the receipt and writes its tombstone in one
   transaction, so whichever commits first, the retry sees one of the two and answers
   `410`, never a second effect.
4. The caller's `perform()` makes the effect and returns its id; the receipt records it
   and both commit together. Anything `perform()` raises rolls the claim back: the
   request never began and a later retry is judged afresh.

Faults are told truthfully: an error before COMMIT was sent means nothing was saved
(`not_committed`); an error from COMMIT itself means we cannot tell (`unknown`).
"""

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import F

from receipts.exceptions import (
    OutcomeUnavailable,
    ReceiptError,
    RequestConflict,
    RequestDeleted,
    RequestExpired,
    RequestInProgress,
)
from receipts.fingerprint import differing_fields, identity_key
from receipts.models import Attempt, Receipt, Tombstone

log = logging.getLogger(__name__)

LOCK_NOT_AVAILABLE = "55P03"


@dataclass(frozen=True)
class Identity:
    scope: str
    operation: str
    request_id: uuid.UUID

    @property
    def key(self) -> uuid.UUID:
        return identity_key(scope=self.scope, operation=self.operation, request_id=self.request_id)


@dataclass(frozen=True)
class Settled:
    """A write that is saved: either just now (`replayed` false) or earlier."""

    receipt: Receipt
    replayed: bool


def receipt_execute(
    *,
    identity: Identity,
    digests: Mapping[str, str],
    route: str,
    now: datetime,
    retention: timedelta,
    claim_wait_seconds: int,
    perform: Callable[[], int],
) -> Settled:
    """Run `perform` at most once for `identity`; answer a repeat with the first result."""
    committing = False
    try:
        with transaction.atomic():
            _bound_lock_waits(claim_wait_seconds)
            receipt = _claim(identity, digests, route, now, now + retention)
            replayed = receipt is None
            if replayed:
                receipt, verdict = _judge_existing(identity, digests, now)
            else:
                _refuse_if_tombstoned(identity, now)
                receipt.result_id = perform()
                Receipt.objects.filter(pk=receipt.pk).update(result_id=receipt.result_id)
                verdict = None
            # Logged inside the transaction: one commit for the answer and its log line.
            _attempt(identity, route, now, verdict, receipt, replayed=replayed).save()
            committing = True
    except ReceiptError as error:
        _record_attempt(identity, route, now, error)
        raise
    except DatabaseError as error:
        outcome = OutcomeUnavailable.UNKNOWN if committing else OutcomeUnavailable.NOT_COMMITTED
        log.warning(
            "write for %s failed with %s (sqlstate %s); outcome %s",
            identity.operation,
            type(error).__name__,
            _sqlstate(error),
            outcome,
        )
        _record_attempt(identity, route, now, OutcomeUnavailable(outcome=outcome))
        raise OutcomeUnavailable(outcome=outcome) from None
    except Exception as refusal:
        _record_attempt(identity, route, now, refusal)
        raise
    if verdict is not None:
        raise verdict
    return Settled(receipt=receipt, replayed=replayed)


def _bound_lock_waits(seconds: int) -> None:
    # The claim waits for another transaction holding the same identity; so does any
    # other row this write touches. Neither may hang a worker: past the bound the
    # statement fails and we answer in_progress (the claim) or unavailable (the rest).
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{int(seconds)}s'")


def _claim(
    identity: Identity,
    digests: Mapping[str, str],
    route: str,
    now: datetime,
    expires_at: datetime,
) -> Receipt | None:
    """Insert the receipt; None when the identity already has one (committed by now)."""
    values = {
        "scope": identity.scope,
        "operation": identity.operation,
        "request_id": identity.request_id,
        "digests": dict(digests),
        "state": Receipt.State.SUCCEEDED,
        "first_route": route,
        "attempts": 1,
        "first_seen_at": now,
        "last_seen_at": now,
        "receipt_expires_at": expires_at,
    }
    fields = [Receipt._meta.get_field(name) for name in values]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    params = [field.get_db_prep_save(values[field.name], connection) for field in fields]
    placeholders = ", ".join(["%s"] * len(fields))
    sql = (
        f"INSERT INTO {connection.ops.quote_name(Receipt._meta.db_table)} ({columns}) "
        f"VALUES ({placeholders}) ON CONFLICT (scope, operation, request_id) DO NOTHING "
        f"RETURNING id"
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
    except DatabaseError as error:
        if _sqlstate(error) == LOCK_NOT_AVAILABLE:
            raise RequestInProgress() from None
        raise
    if row is None:
        return None
    return Receipt(id=row[0], **values)


def _judge_existing(
    identity: Identity, digests: Mapping[str, str], now: datetime
) -> tuple[Receipt, ReceiptError | None]:
    receipt = Receipt.objects.get(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id
    )
    Receipt.objects.filter(pk=receipt.pk).update(attempts=F("attempts") + 1, last_seen_at=now)
    receipt.attempts += 1
    receipt.last_seen_at = now
    # Deleted and expired win over a content comparison: once the receipt is a tombstone
    # the content can no longer be compared, and the answer must not change at purge time.
    if receipt.state == Receipt.State.DELETED:
        return receipt, RequestDeleted()
    if now >= receipt.receipt_expires_at:
        return receipt, RequestExpired(expired_at=receipt.receipt_expires_at)
    changed = differing_fields(receipt.digests, digests)
    if changed:
        return receipt, RequestConflict(conflicting_fields=changed, existing_id=receipt.result_id)
    return receipt, None


def _refuse_if_tombstoned(identity: Identity, now: datetime) -> None:
    reason = (
        Tombstone.objects.filter(key=identity.key, expires_at__gt=now)
        .values_list("reason", flat=True)
        .first()
    )
    if reason == Tombstone.Reason.DELETED:
        raise RequestDeleted()
    if reason == Tombstone.Reason.EXPIRED:
        raise RequestExpired()


_OUTCOMES = {
    RequestConflict: Attempt.Outcome.CONFLICT,
    RequestDeleted: Attempt.Outcome.DELETED,
    RequestExpired: Attempt.Outcome.EXPIRED,
    RequestInProgress: Attempt.Outcome.IN_PROGRESS,
    OutcomeUnavailable: Attempt.Outcome.UNAVAILABLE,
}


def _attempt(
    identity: Identity,
    route: str,
    now: datetime,
    error: Exception | None,
    receipt: Receipt | None = None,
    *,
    replayed: bool = False,
) -> Attempt:
    if error is None:
        outcome = Attempt.Outcome.REPLAYED if replayed else Attempt.Outcome.CREATED
    else:
        outcome = _OUTCOMES.get(type(error), Attempt.Outcome.REFUSED)
    detail = "" if error is None else str(getattr(error, "code", type(error).__name__))
    return Attempt(
        identity=identity.key,
        receipt_id=receipt.pk if receipt else None,
        route=route,
        outcome=outcome,
        detail=detail[:32],
        created_at=now,
    )


def _record_attempt(
    identity: Identity, route: str, now: datetime, error: Exception
) -> None:
    """Log a call whose transaction rolled back; a failed log never changes the answer."""
    _save_attempt(_attempt(identity, route, now, error))


def attempt_record(
    *,
    identity: Identity,
    route: str,
    outcome: str,
    now: datetime,
    detail: str = "",
    receipt_id: int | None = None,
) -> None:
    """Log one call outside any write; a failed log never changes the answer."""
    _save_attempt(
        Attempt(
            identity=identity.key,
            receipt_id=receipt_id,
            route=route,
            outcome=outcome,
            detail=detail[:32],
            created_at=now,
        )
    )


def _save_attempt(attempt: Attempt) -> None:
    try:
        attempt.save()
    except DatabaseError as error:
        log.warning("attempt log write failed with sqlstate %s", _sqlstate(error))


def receipt_lookup(*, identity: Identity) -> Receipt | None:
    return Receipt.objects.filter(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id
    ).first()


def tombstone_lookup(*, identity: Identity, now: datetime) -> Tombstone | None:
    return Tombstone.objects.filter(key=identity.key, expires_at__gt=now).first()


def receipt_mark_deleted(
    *, operation: str, result_ids: list[int], now: datetime, retention: timedelta
) -> int:
    """Mark the receipts of deleted results; their digests stay so a retry gets 410 deleted."""
    return Receipt.objects.filter(operation=operation, result_id__in=result_ids).update(
        state=Receipt.State.DELETED, deleted_at=now, receipt_expires_at=now + retention
    )


def _sqlstate(error: BaseException) -> str | None:
    cause = error.__cause__ or error
    return getattr(cause, "sqlstate", None) or getattr(cause, "sqlite_errorname", None)
