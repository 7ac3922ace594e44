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
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q

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
        _record_attempt(identity, route, now, verdict, receipt)
        raise verdict
    _record_attempt(identity, route, now, None, receipt, replayed=replayed)
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
) -> tuple[Receipt | None, ReceiptError | None]:
    receipt = Receipt.objects.filter(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id
    ).first()
    if receipt is None:
        # The purge removed it between our claim (which saw it) and this read; it wrote
        # the tombstone in the same commit, so answer as the tombstone says.
        return None, _tombstone_verdict(identity, now) or RequestExpired()
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
    verdict = _tombstone_verdict(identity, now)
    if verdict is not None:
        raise verdict


def _tombstone_verdict(identity: Identity, now: datetime) -> ReceiptError | None:
    reason = (
        Tombstone.objects.filter(key=identity.key, expires_at__gt=now)
        .values_list("reason", flat=True)
        .first()
    )
    if reason == Tombstone.Reason.DELETED:
        return RequestDeleted()
    if reason == Tombstone.Reason.EXPIRED:
        return RequestExpired()
    return None


_OUTCOMES = {
    RequestConflict: Attempt.Outcome.CONFLICT,
    RequestDeleted: Attempt.Outcome.DELETED,
    RequestExpired: Attempt.Outcome.EXPIRED,
    RequestInProgress: Attempt.Outcome.IN_PROGRESS,
    OutcomeUnavailable: Attempt.Outcome.UNAVAILABLE,
}


def _record_attempt(
    identity: Identity,
    route: str,
    now: datetime,
    error: Exception | None,
    receipt: Receipt | None = None,
    *,
    replayed: bool = False,
) -> None:
    if error is None:
        outcome = Attempt.Outcome.REPLAYED if replayed else Attempt.Outcome.CREATED
    else:
        outcome = _OUTCOMES.get(type(error), Attempt.Outcome.REFUSED)
    attempt_record(
        identity=identity,
        route=route,
        outcome=outcome,
        detail="" if error is None else str(getattr(error, "code", type(error).__name__)),
        receipt_id=receipt.pk if receipt else None,
        now=now,
    )


def attempt_record(
    *,
    identity: Identity,
    route: str,
    outcome: str,
    now: datetime,
    detail: str = "",
    receipt_id: int | None = None,
) -> None:
    """Log one call; a failure to log never changes the answer the caller gets."""
    try:
        Attempt.objects.create(
            identity=identity.key,
            receipt_id=receipt_id,
            route=route,
            outcome=outcome,
            detail=detail[:32],
            created_at=now,
        )
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


# --- Retention: receipts into tombstones ------------------------------------------------
#
# The purges (maintenance.services) decide *which* receipts go; these functions know how
# receipts are found, locked and replaced by tombstones. On PostgreSQL every selection
# takes row locks with SKIP LOCKED, so two purge runs split the work and a purge never
# waits behind a retry that holds a receipt (the retry's claim bumps `attempts`, which
# locks the row); on SQLite the immediate write transaction serializes everything.


@dataclass(frozen=True)
class ReceiptRow:
    """The columns a purge needs; never the digests."""

    id: int
    scope: str
    operation: str
    request_id: uuid.UUID
    state: str
    result_id: int | None
    receipt_expires_at: datetime

    @property
    def key(self) -> uuid.UUID:
        return identity_key(scope=self.scope, operation=self.operation, request_id=self.request_id)


_ROW_FIELDS = [
    "id", "scope", "operation", "request_id", "state", "result_id", "receipt_expires_at"
]


def _rows(queryset, *, lock: bool) -> list[ReceiptRow]:
    if lock:
        queryset = queryset.select_for_update(skip_locked=True)
    return [ReceiptRow(*values) for values in queryset.values_list(*_ROW_FIELDS)]


def receipts_due(
    *,
    operation: str,
    now: datetime,
    limit: int,
    after: tuple[datetime, int] | None = None,
    state: str | None = None,
    lock: bool = True,
) -> list[ReceiptRow]:
    """Receipts expired at `now`, oldest expiry first; with `lock`, locked (PostgreSQL,
    skipping rows another transaction holds).

    `after` is the last `(receipt_expires_at, id)` a run already looked at, so a run walks
    past receipts it had to leave (a thread not yet wholly expired) instead of rereading
    them every batch.
    """
    due = Receipt.objects.filter(operation=operation, receipt_expires_at__lte=now)
    if state is not None:
        due = due.filter(state=state)
    if after is not None:
        moment, last_id = after
        due = due.filter(
            Q(receipt_expires_at__gt=moment) | Q(receipt_expires_at=moment, id__gt=last_id)
        )
    return _rows(due.order_by("receipt_expires_at", "id")[:limit], lock=lock)


def receipts_lock(*, ids: Collection[int]) -> list[ReceiptRow]:
    """Lock these receipts (PostgreSQL), leaving out any another transaction holds."""
    if not ids:
        return []
    return _rows(Receipt.objects.filter(id__in=list(ids)).order_by("id"), lock=True)


def receipts_for_results(
    *, operation: str, result_ids: Collection[int], lock: bool
) -> list[ReceiptRow]:
    """The receipts of these results; with `lock`, only those this transaction could lock."""
    if not result_ids:
        return []
    found = Receipt.objects.filter(operation=operation, result_id__in=list(result_ids))
    return _rows(found.order_by("id"), lock=lock)


def receipts_entomb(*, receipts: Collection[ReceiptRow], tombstone_retention: timedelta) -> int:
    """Replace receipts by tombstones; call inside the transaction that locked them.

    One tombstone per identity: the 16-byte identity digest as key, the reason, and
    `receipt_expires_at + tombstone_retention`. A stale tombstone of the same identity
    (expired, not yet purged, then the id was used again) is overwritten.
    """
    if not receipts:
        return 0
    tombstones = {
        row.key: Tombstone(
            key=row.key,
            reason=(
                Tombstone.Reason.DELETED
                if row.state == Receipt.State.DELETED
                else Tombstone.Reason.EXPIRED
            ),
            expires_at=row.receipt_expires_at + tombstone_retention,
        )
        for row in receipts
    }
    Tombstone.objects.bulk_create(
        tombstones.values(),
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=["reason", "expires_at"],
    )
    delete_ids(Receipt, [row.id for row in receipts])
    return len(tombstones)


def tombstones_purge(*, now: datetime, limit: int) -> int:
    """Remove up to `limit` tombstones past their expiry; after that an old id is unknown."""
    due = Tombstone.objects.filter(expires_at__lte=now).order_by("expires_at")[:limit]
    keys = list(due.select_for_update(skip_locked=True).values_list("key", flat=True))
    return delete_ids(Tombstone, keys)


def attempts_purge(*, before: datetime, limit: int) -> int:
    """Remove up to `limit` attempts logged before `before`."""
    due = Attempt.objects.filter(created_at__lt=before).order_by("created_at")[:limit]
    ids = list(due.select_for_update(skip_locked=True).values_list("id", flat=True))
    return delete_ids(Attempt, ids)


def delete_ids(model, ids: Collection) -> int:
    """`DELETE ... WHERE pk IN (...)` without the ORM's cascade collector.

    The collector reads every row (and its relations) before deleting; the purges have
    already decided and locked what goes, so one plain statement does.
    """
    if not ids:
        return 0
    table = connection.ops.quote_name(model._meta.db_table)
    column = connection.ops.quote_name(model._meta.pk.column)
    field = model._meta.pk
    params = [field.get_db_prep_value(value, connection) for value in ids]
    placeholders = ", ".join(["%s"] * len(params))
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE {column} IN ({placeholders})", params)
        return cursor.rowcount
