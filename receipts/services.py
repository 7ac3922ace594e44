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
   INSERT until the first commits or rolls back (bounded by the connection's
   `lock_timeout`); on SQLite the whole transaction is `BEGIN IMMEDIATE`, so claims
   queue. A claim that finds a committed receipt rolls back and replays (step 1).
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

import json
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Model

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
    ReceiptRow,
    attempts_purge,
    delete_ids,
    receipts_claim_for_results,
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
from receipts.purge import _read_moment as read_moment

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
    result: Model
    replayed: bool


@dataclass(frozen=True)
class Effect:
    """The one row a write creates, as field values. Handed to the engine so that on
    PostgreSQL it is written in the same statement as the receipt's bookkeeping."""

    model: type[Model]
    values: Mapping[str, object]


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
    try:
        with transaction.atomic():
            receipt = _claim(identity, digests, route, now, now + retention)
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
                result = _statements().create_effect(identity, receipt, effect, route, now)
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


def receipt_seen_sql(identity: Identity) -> tuple[str, list]:
    """`EXISTS (...)`: whether this identity has a committed receipt, as SQL a caller
    may fold into a statement of its own (the board's rate-limit counters do)."""
    return (
        f"EXISTS (SELECT 1 FROM {_RECEIPTS} WHERE scope = %s AND operation = %s "
        f"AND request_id = %s)",
        [identity.scope, identity.operation, _uuid_param(identity.request_id)],
    )


def _claim(
    identity: Identity,
    digests: Mapping[str, str],
    route: str,
    now: datetime,
    expires_at: datetime,
) -> Receipt | None:
    """Insert the receipt; None when the identity already has one (committed by now)."""
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
    params = [
        _CLAIM_FIELDS[name].get_db_prep_save(getattr(receipt, name), connection)
        for name in _CLAIM_FIELDS
    ]
    try:
        with connection.cursor() as cursor:
            cursor.execute(_CLAIM_SQL, params)
            row = cursor.fetchone()
    except DatabaseError as error:
        if _sqlstate(error) == LOCK_NOT_AVAILABLE:
            raise RequestInProgress() from None
        raise
    if row is None:
        return None
    receipt.id = row[0]
    return receipt


_RECEIPTS = Receipt._meta.db_table
_ATTEMPTS = Attempt._meta.db_table
_CLAIM_FIELDS = {
    name: Receipt._meta.get_field(name)
    for name in (
        "scope", "operation", "request_id", "digests", "state", "first_route", "attempts",
        "first_seen_at", "last_seen_at", "receipt_expires_at",
    )
}
# Built once at import; it used to be assembled (fields, quoting) on every request.
_CLAIM_SQL = (
    f"INSERT INTO {_RECEIPTS} ({', '.join(f.column for f in _CLAIM_FIELDS.values())}) "
    f"VALUES ({', '.join(['%s'] * len(_CLAIM_FIELDS))}) "
    f"ON CONFLICT (scope, operation, request_id) DO NOTHING RETURNING id"
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
        found = _statements().replay(identity, digests, route, now, model)
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
    if result is None and load is not None and receipt.result_id is not None:
        result = load(receipt.result_id)
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
    # Kept in step with _OUTCOME_SQL, which logs the same verdict in the database.
    if receipt.state == Receipt.State.DELETED:
        return RequestDeleted()
    if now >= receipt.receipt_expires_at:
        return RequestExpired(expired_at=receipt.receipt_expires_at)
    changed = differing_fields(receipt.digests, digests)
    if changed:
        return RequestConflict(conflicting_fields=changed, existing_id=receipt.result_id)
    return None


_RECEIPT_COLUMNS = (
    "id", "state", "digests", "result_id", "first_route", "attempts", "first_seen_at",
    "last_seen_at", "receipt_expires_at", "deleted_at",
)


def _receipt_from_row(identity: Identity, row) -> Receipt:
    values = dict(zip(_RECEIPT_COLUMNS, row, strict=False))
    if isinstance(values["digests"], str):
        values["digests"] = json.loads(values["digests"])
    for name in ("first_seen_at", "last_seen_at", "receipt_expires_at"):
        values[name] = read_moment(values[name])
    if values["deleted_at"] is not None:
        values["deleted_at"] = read_moment(values["deleted_at"])
    return Receipt(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id,
        **values,
    )


class _PostgreSQL:
    """The write path in as few statements as PostgreSQL allows (data-modifying CTEs).

    Replaces, for a new post, the tombstone read, the entry's ORM INSERT, the receipt's
    result_id UPDATE and the attempt's ORM INSERT (four round trips, three compiled by
    the ORM each time) with one; for a replay, the receipt read, its UPDATE, the entry
    read and the attempt INSERT, and the transaction around them, with one. Measured
    (tests/bench/profile_post.py, cProfile, 300 posts on PostgreSQL): 7,540 Python calls
    and 13 round trips a new post before, 3,100 and 6 after; the ORM's SQL compilation
    (`as_sql`) was 12% of the profiled time before and is gone from this path.
    """

    # The verdict of _verdict, in SQL, so the attempt is logged in the same statement.
    _OUTCOME_SQL = (
        "CASE WHEN state = %(deleted)s THEN 'deleted' "
        "WHEN receipt_expires_at <= %(now)s THEN 'expired' "
        "WHEN digests = %(digests)s::jsonb THEN 'replayed' ELSE 'conflict' END"
    )

    def replay(self, identity, digests, route, now, model):
        # One statement, in its own (auto)commit: lock and count (UPDATE), log the attempt,
        # and join the effect. The join reads the snapshot this statement started with,
        # which holds the effect whenever the receipt was committed before it began (the
        # caller saw it, or its claim waited for it); otherwise `load` reads it after.
        join, columns = "", ""
        if model is not None:
            fields = model._meta.concrete_fields
            columns = ", " + ", ".join(f"made.{f.column}" for f in fields)
            join = (
                f" LEFT JOIN {model._meta.db_table} made "
                f"ON made.{model._meta.pk.column} = hit.result_id"
            )
        sql = f"""
            WITH hit AS (
                UPDATE {_RECEIPTS} SET attempts = attempts + 1, last_seen_at = %(now)s
                WHERE scope = %(scope)s AND operation = %(operation)s
                    AND request_id = %(request_id)s
                RETURNING {", ".join(_RECEIPT_COLUMNS)}, {self._OUTCOME_SQL} AS outcome
            ), logged AS (
                INSERT INTO {_ATTEMPTS} (identity, receipt_id, route, outcome, detail, created_at)
                SELECT %(key)s, id, %(route)s, outcome,
                    CASE WHEN outcome = 'replayed' THEN '' ELSE outcome END, %(now)s
                FROM hit
            )
            SELECT {", ".join(f"hit.{c}" for c in _RECEIPT_COLUMNS)}{columns}
            FROM hit{join}
        """
        with connection.cursor() as cursor:
            cursor.execute(sql, {
                "now": now,
                "scope": identity.scope,
                "operation": identity.operation,
                "request_id": identity.request_id,
                "deleted": Receipt.State.DELETED.value,
                "digests": json.dumps(dict(digests)),
                "key": identity.key,
                "route": route,
            })
            row = cursor.fetchone()
        if row is None:
            return None
        receipt = _receipt_from_row(identity, row[: len(_RECEIPT_COLUMNS)])
        result = None
        effect_row = row[len(_RECEIPT_COLUMNS):]
        if model is not None and effect_row[0] is not None:
            names = [f.attname for f in model._meta.concrete_fields]
            result = model.from_db(connection.alias, names, list(effect_row))
        return receipt, result

    def create_effect(self, identity, receipt, effect, route, now):
        # One statement after the claim: the tombstone read (a statement of its own after
        # the claim, so it sees what a purge the claim waited for committed), the row
        # (only when no tombstone), the receipt's result_id and the attempt log. It
        # replaces four ORM statements.
        model = effect.model
        fields = [model._meta.get_field(name) for name in effect.values]
        columns = ", ".join(f.column for f in fields)
        values = [f.get_db_prep_save(effect.values[f.attname], connection) for f in fields]
        # Typed placeholders: an INSERT ... SELECT does not infer a NULL's type.
        typed = ", ".join(f"CAST(%s AS {f.db_type(connection)})" for f in fields)
        sql = f"""
            WITH tomb AS (
                SELECT reason FROM {Tombstone._meta.db_table}
                WHERE key = %s AND expires_at > %s
            ), made AS (
                INSERT INTO {model._meta.db_table} ({columns})
                SELECT {typed}
                WHERE NOT EXISTS (SELECT 1 FROM tomb)
                RETURNING {model._meta.pk.column} AS id
            ), settled AS (
                UPDATE {_RECEIPTS} SET result_id = made.id FROM made WHERE {_RECEIPTS}.id = %s
            ), logged AS (
                INSERT INTO {_ATTEMPTS} (identity, receipt_id, route, outcome, detail, created_at)
                SELECT %s, %s, %s, %s, '', %s FROM made
            )
            SELECT (SELECT id FROM made), (SELECT reason FROM tomb)
        """
        params = [
            identity.key, now.astimezone(UTC).date(), *values, receipt.pk,
            identity.key, receipt.pk, route, Attempt.Outcome.CREATED.value, now,
        ]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            made, reason = cursor.fetchone()
        if made is None:
            raise _tombstone_error(reason)
        return model(pk=made, **effect.values)


class _SQLite:
    """SQLite runs each statement in-process; what costs there is the ORM, not round trips,
    and its immediate transaction already serializes everything."""

    def replay(self, identity, digests, route, now, model):
        # The write lock first (BEGIN IMMEDIATE), then read: nobody changes the receipt or
        # the effect between this read and the answer.
        with transaction.atomic():
            found = Receipt.objects.filter(
                scope=identity.scope, operation=identity.operation,
                request_id=identity.request_id,
            )
            if not found.update(attempts=F("attempts") + 1, last_seen_at=now):
                return None
            receipt = found.first()
            _attempt(identity, route, now, _verdict(receipt, digests, now), receipt,
                     replayed=True).save()
            result = None
            if model is not None and receipt.result_id is not None:
                result = model._default_manager.filter(pk=receipt.result_id).first()
            return receipt, result

    def create_effect(self, identity, receipt, effect, route, now):
        _refuse_if_tombstoned(identity, now)
        model = effect.model
        fields = [model._meta.get_field(name) for name in effect.values]
        values = [f.get_db_prep_save(effect.values[f.attname], connection) for f in fields]
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {model._meta.db_table} ({', '.join(f.column for f in fields)}) "
                f"VALUES ({', '.join(['%s'] * len(values))}) RETURNING {model._meta.pk.column}",
                values,
            )
            made = cursor.fetchone()[0]
            cursor.execute(f"UPDATE {_RECEIPTS} SET result_id = %s WHERE id = %s",
                           [made, receipt.pk])
        receipt.result_id = made
        _attempt(identity, route, now, None, receipt).save()
        return model(pk=made, **effect.values)


def _statements() -> _PostgreSQL | _SQLite:
    # The one place the write path branches on the engine.
    return _POSTGRESQL if connection.vendor == "postgresql" else _SQLITE


_POSTGRESQL, _SQLITE = _PostgreSQL(), _SQLite()


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
    return None if reason is None else _tombstone_error(reason)


def _tombstone_error(reason: int) -> ReceiptError:
    if reason == Tombstone.Reason.DELETED:
        return RequestDeleted()
    return RequestExpired()


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
