"""The idempotency engine: one intended write, one effect, however often it is sent.

How a write runs (SPEC 5.1 step 3 and 7):

1. A retry of a request whose receipt the caller has already seen committed (`seen`, a
   look the caller folded into one of its own statements) is answered by `_replay`: ONE
   statement locks the receipt (`UPDATE ... RETURNING`, so it waits for an operator's
   delete or a purge that holds it, and reads the receipt as they left it), counts the
   attempt, logs it and joins the effect. Its verdict is read from the locked row, never
   from an earlier read: a delete that commits first makes it `410 deleted`.
2. Anything else claims its identity `(scope, operation, request_id)` in a transaction
   by inserting the receipt with `ON CONFLICT DO NOTHING`. The unique constraint is the
   lock: on PostgreSQL a second transaction with the same identity waits inside that
   INSERT until the first commits or rolls back (bounded by `lock_timeout`, which the
   claim statement itself sets for its transaction: `statements.wait_bound`); on
   SQLite the whole transaction is `BEGIN IMMEDIATE`, so claims queue. A claim that
   finds a committed receipt rolls back and replays (step 1).
3. A request that won the claim checks for a tombstone in a statement *after* the claim,
   so under READ COMMITTED it sees what every transaction the claim waited for left. A
   purge deletes the receipt and writes its tombstone in one transaction: whichever
   commits first, the retry sees one of the two and answers `410`, never a second effect.
4. The effect is made and the receipt records it; both commit together. Given as an
   `Effect` (one row), the tombstone check, the row, the receipt's `result_id` and the
   attempt log are ONE statement on PostgreSQL. Anything raised rolls the claim back: the
   request never began and a later retry is judged afresh.

Faults are told truthfully: an error before COMMIT was sent means nothing was saved
(`not_committed`); an error from COMMIT itself means we cannot tell (`unknown`).
"""

import functools
import json
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import Model

from receipts import statements
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
from receipts.purge import (  # noqa: F401  (the purges' half of the engine, re-exported)
    RECEIPTS_TABLE,
    ReceiptRow,
    attempts_purge,
    delete_ids,
    receipts_claim_for_results,
    receipts_deleted_due,
    receipts_due,
    receipts_entomb,
    receipts_for_results,
    receipts_lock,
    skip_locked,
    sql_in,
    sql_moment,
    tombstone_expiry_day,
    tombstones_purge,
)

log = logging.getLogger(__name__)

LOCK_NOT_AVAILABLE = "55P03"


@dataclass(frozen=True)
class Identity:
    scope: str
    operation: str
    request_id: uuid.UUID

    @functools.cached_property
    def key(self) -> uuid.UUID:
        return identity_key(scope=self.scope, operation=self.operation, request_id=self.request_id)


@dataclass(frozen=True)
class Settled:
    """A write that is saved: either just now (`replayed` false) or earlier."""

    receipt: Receipt
    result: Model
    replayed: bool


@dataclass(frozen=True)
class Companion:
    """Rows another app writes with an effect, linked to it by the effect's id:
    `INSERT INTO table (columns..., link) SELECT <rows_sql's columns>, <the new id>`.
    On PostgreSQL they are written in the effect's own statement (a round trip fewer on
    every post that has them); on SQLite in a statement right after it. `made` is called
    inside the transaction with the `returning` column of the rows written."""

    table: str
    columns: tuple[str, ...]
    link: str
    rows_sql: str
    params: tuple
    returning: str
    made: Callable[[list], None]

    @property
    def shape(self) -> tuple:
        """What the statement's text depends on (its parameters aside)."""
        return (self.table, self.columns, self.link, self.rows_sql, self.returning)


@dataclass(frozen=True)
class Effect:
    """The one row a write creates, as field values. Handed to the engine so that on
    PostgreSQL it is written in the same statement as the receipt's bookkeeping.
    `companions` is asked for only when the row is made (never for a replay)."""

    model: type[Model]
    values: Mapping[str, object]
    companions: Callable[[], Sequence[Companion]] | None = None


class _ClaimLost(Exception):
    """The identity has a committed receipt: leave the claim's transaction and replay."""


def receipt_execute(
    *,
    identity: Identity,
    digests: Mapping[str, str],
    route: str,
    now: datetime,
    retention: timedelta,
    effect: Effect | None = None,
    perform: Callable[[], Model] | None = None,
    load: Callable[[int], Model | None] | None = None,
    before: Callable[[], None] | None = None,
    after: Callable[[Model], None] | None = None,
    seen: bool = False,
) -> Settled:
    """Make the effect at most once for `identity`; answer a repeat with the first result.

    The effect is an `Effect` row (its model also loads it for a replay) or `perform`,
    any callable returning a saved model (then `load` finds it again by id). `before`
    runs inside the claim's transaction before the effect and may refuse (the caller's
    checks that come after step 3); `after` runs with the new effect in the same
    transaction. `seen`: the caller saw a committed receipt for this identity.
    """
    model = effect.model if effect is not None else None
    if seen:
        settled = _replay(identity, digests, route, now, model=model, load=load)
        if settled is not None:
            return settled
    committing = False
    engine = statements.for_connection()
    result_id_sql = engine.result_id_at_claim(model) if effect is not None else None
    try:
        with transaction.atomic():
            receipt = _claim(identity, digests, route, now, now + retention, result_id_sql)
            if receipt is None:
                raise _ClaimLost()
            if before is not None:
                try:
                    before()
                except Exception:
                    # A tombstone is step 3 of the contract; the caller's refusals come
                    # after it, so it answers first.
                    _refuse_if_tombstoned(identity, now)
                    raise
            if effect is not None:
                result = engine.create_effect(identity, receipt, effect, route, now)
            else:
                _refuse_if_tombstoned(identity, now)
                result = perform()
                receipt.result_id = result.pk
                Receipt.objects.filter(pk=receipt.pk).update(result_id=result.pk)
                _attempt(identity, route, now, None, receipt).save()
            receipt.result_id = result.pk
            if after is not None:
                after(result)
            committing = True
    except _ClaimLost:
        settled = _replay(identity, digests, route, now, model=model, load=load)
        if settled is None:  # purged between the claim and this read: the tombstone says
            verdict = _tombstone_verdict(identity, now) or RequestExpired()
            _record_attempt(identity, route, now, verdict)
            raise verdict from None
        return settled
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
    return Settled(receipt=receipt, result=result, replayed=False)


def receipt_seen_sql(
    *, operation: str, request_id: uuid.UUID, scope_sql: str = "%s", scope_params: list
) -> tuple[str, list]:
    """`EXISTS (...)`: whether an identity has a committed receipt, as SQL a caller may
    fold into a statement of its own (the board's rate-limit counters do). `scope_sql`
    is the scope as an SQL expression, for a statement that learns the caller itself."""
    return (
        f"EXISTS (SELECT 1 FROM {_RECEIPTS} WHERE scope = {scope_sql} AND operation = %s "
        f"AND request_id = %s)",
        [*scope_params, operation, _uuid_param(request_id)],
    )


def _claim(
    identity: Identity,
    digests: Mapping[str, str],
    route: str,
    now: datetime,
    expires_at: datetime,
    result_id_sql: str | None = None,
) -> Receipt | None:
    """Insert the receipt; None when the identity already has one (committed by now).
    `result_id_sql` reserves the effect's id with the claim (the engine's choice)."""
    receipt = Receipt(
        scope=identity.scope,
        operation=identity.operation,
        request_id=identity.request_id,
        digests=dict(digests),
        state=Receipt.State.SUCCEEDED,
        first_route=route,
        attempts=1,
        first_seen_at=now,
        last_seen_at=now,
        receipt_expires_at=expires_at,
    )
    # Adapted by hand: the fields' own get_db_prep_save (JSONField's above all) was a
    # third of this function's time.
    moment = connection.ops.adapt_datetimefield_value
    params = [
        identity.scope, identity.operation, _uuid_param(identity.request_id),
        json.dumps(dict(digests)), Receipt.State.SUCCEEDED.value, route, 1,
        moment(now), moment(now), moment(expires_at),
    ]
    try:
        with connection.cursor() as cursor:
            cursor.execute(_claim_sql(result_id_sql, _claim_bound()), params)
            row = cursor.fetchone()
    except DatabaseError as error:
        if _sqlstate(error) == LOCK_NOT_AVAILABLE:
            raise RequestInProgress() from None
        raise
    if row is None:
        return None
    receipt.id, receipt.result_id = row
    return receipt


_RECEIPTS = Receipt._meta.db_table
_ATTEMPTS = Attempt._meta.db_table
# In the order of the parameters _claim passes.
_CLAIM_FIELDS = {
    name: Receipt._meta.get_field(name)
    for name in (
        "scope", "operation", "request_id", "digests", "state", "first_route", "attempts",
        "first_seen_at", "last_seen_at", "receipt_expires_at",
    )
}


def _claim_bound() -> str | None:
    return statements.wait_bound() if connection.vendor == "postgresql" else None


@functools.cache
def _claim_sql(result_id_sql: str | None, bound: str | None = None) -> str:
    # Built once; it used to be assembled (fields, quoting) on every request.
    columns = [f.column for f in _CLAIM_FIELDS.values()]
    conflict = "ON CONFLICT (scope, operation, request_id) DO NOTHING RETURNING id, result_id"
    if bound is None:  # SQLite: its immediate transaction and busy timeout bound the wait
        values = ["%s"] * len(_CLAIM_FIELDS)
        return (
            f"INSERT INTO {_RECEIPTS} ({', '.join(columns)}) VALUES ({', '.join(values)}) "
            f"{conflict}"
        )
    # PostgreSQL: the row is SELECTed from `bound`, so the wait bound is set for the
    # transaction before the INSERT can wait on another claim (statements.wait_bound).
    # Typed placeholders, as INSERT ... SELECT does not infer them from the columns; text,
    # not varchar(n), for strings, so a value too long fails as in VALUES, never truncated.
    values = [
        f"CAST(%s AS {'text' if f.get_internal_type() == 'CharField' else f.db_type(connection)})"
        for f in _CLAIM_FIELDS.values()
    ]
    if result_id_sql is not None:
        columns.append("result_id")
        values.append(result_id_sql)
    return (
        f"INSERT INTO {_RECEIPTS} ({', '.join(columns)}) SELECT {', '.join(values)} "
        f"FROM (SELECT {bound}) AS bound {conflict}"
    )


def _uuid_param(value: uuid.UUID):
    return Receipt._meta.get_field("request_id").get_db_prep_value(value, connection)


# --- Replays ------------------------------------------------------------------------------


def _replay(
    identity: Identity,
    digests: Mapping[str, str],
    route: str,
    now: datetime,
    *,
    model: type[Model] | None,
    load: Callable[[int], Model | None] | None,
) -> Settled | None:
    """Answer a request whose receipt is committed; None when it is gone (purged).

    Raises the verdict (deleted, expired, conflict) after logging it with the attempt.
    """
    try:
        found = statements.for_connection().replay(
            identity, digests, route, now, model, lambda receipt: _verdict(receipt, digests, now)
        )
    except DatabaseError as error:
        if _sqlstate(error) == LOCK_NOT_AVAILABLE:
            # A delete, a purge or another retry has held this receipt past the bound.
            _record_attempt(identity, route, now, RequestInProgress())
            raise RequestInProgress() from None
        log.warning("replay for %s failed with %s (sqlstate %s)", identity.operation,
                    type(error).__name__, _sqlstate(error))
        # Only the attempt count may have changed; the entry was saved long before.
        raise OutcomeUnavailable(outcome=OutcomeUnavailable.NOT_COMMITTED) from None
    if found is None:
        return None
    receipt, result = found
    if result is None and receipt.result_id is not None:
        # Not in the replay's own snapshot (never expected: the receipt was committed
        # with its effect before that statement began); read it again to be sure.
        if load is not None:
            result = load(receipt.result_id)
        elif model is not None:
            result = model._default_manager.filter(pk=receipt.result_id).first()
    verdict = _verdict(receipt, digests, now)
    if verdict is None and result is None:
        # An effect goes without its receipt only in a purge, past expiry.
        verdict = RequestExpired(expired_at=receipt.receipt_expires_at)
    if verdict is not None:
        raise verdict
    return Settled(receipt=receipt, result=result, replayed=True)


def _verdict(receipt: Receipt, digests: Mapping[str, str], now: datetime) -> ReceiptError | None:
    # Deleted and expired win over a content comparison: once the receipt is a tombstone
    # the content can no longer be compared, and the answer must not change at purge time.
    # Kept in step with statements.PostgreSQL._OUTCOME_SQL, which logs the same verdict.
    if receipt.state == Receipt.State.DELETED:
        return RequestDeleted()
    if now >= receipt.receipt_expires_at:
        return RequestExpired(expired_at=receipt.receipt_expires_at)
    changed = differing_fields(receipt.digests, digests)
    if changed:
        return RequestConflict(conflicting_fields=changed, existing_id=receipt.result_id)
    return None


# --- Tombstones and the attempt log -----------------------------------------------------------


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
    return None if reason is None else statements.tombstone_error(reason)


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
