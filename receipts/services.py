"""The idempotency engine: one intended write, one effect, however often it is sent.

How a write runs (SPEC 5.1 step 3 and 7):

1. A retry of a request whose receipt the caller has already seen committed (the board's
   admission looks) is answered by `receipt_replay`: on PostgreSQL ONE
   statement locks the receipt (`UPDATE ... RETURNING`, so it waits for an operator's
   delete or a purge that holds it, and reads the receipt as they left it), counts the
   attempt, logs it and joins the effect. Its verdict is read from the locked row, never
   from an earlier read: a delete that commits first makes it `410 deleted`.
2. Anything else is `receipt_write`: it claims its identity `(scope, operation,
   request_id)` by inserting the receipt (on PostgreSQL a plain INSERT whose unique
   violation is the lost claim, on SQLite `ON CONFLICT DO NOTHING`). The unique
   constraint is the lock: on PostgreSQL a second transaction with the same identity
   waits inside that INSERT until the first commits or rolls back (bounded by
   `lock_timeout`, which the claim statement itself sets for its transaction:
   receipts/sql/postgresql/claim.sql); on SQLite the whole transaction is `BEGIN
   IMMEDIATE`, so claims queue, and the claim is a read of the receipt. A claim lost to
   a committed receipt returns None: the caller replays (step 1).
3. A write that won the claim checks for a tombstone in a statement *after* the claim,
   so under READ COMMITTED it sees what every transaction the claim waited for left. A
   purge deletes the receipt and writes its tombstone in one transaction: whichever
   commits first, the retry sees one of the two and answers `410`, never a second effect.
   Then the caller's refusal (decided before the claim) and its `Guard` (read in the
   same transaction) are answered, in that order.
4. Otherwise the effect (an `Effect`: one row and its companions' rows) is made with
   the id the claim reserved, and all commit with the receipt. The receipt is the log of
   the attempt that made it (its first route and time): no attempt row is written for
   it, every other attempt has one. A refused write leaves nothing but its attempt. On
   PostgreSQL no code of the caller runs inside the engine: the claim and the write are
   two statements sent in one round trip (receipts/engines/postgresql.py `write`), so
   there is no moment for it; on SQLite the guard is Python the engine calls in its
   transaction, and the companions' rows are its statement after the effect's
   (receipts/engines/sqlite.py).

Faults are told truthfully (receipts/faults.py, the one translation): an error the
database reports before anything commits means nothing was saved (`not_committed`); a
connection lost once COMMIT was sent (on PostgreSQL it travels with the statements)
means we cannot tell (`unknown`). The statements are per engine: receipts/engines/.
"""

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DatabaseError
from django.db.models import Model, QuerySet

from receipts import engines, statements
from receipts.exceptions import (
    OutcomeUnavailable,
    ReceiptError,
    RequestConflict,
    RequestDeleted,
    RequestExpired,
    RequestInProgress,
)
from receipts.faults import Fault, fault_answer, sqlstate
from receipts.fingerprint import (
    Identity,
    differing_fields,
    differing_packed,
    field_digests,
    packed_digests,
    packed_same_request,
    per_field_packed,
)
from receipts.models import Attempt, Receipt, Tombstone, of_results, tombstone_today

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Saved:
    """A write that is saved: either just now (`replayed` false) or earlier. A write
    made just now also has, for each of its effect's companions, the `returning`
    values of the rows it wrote (`returned`)."""

    receipt: Receipt
    result: Model
    replayed: bool
    returned: tuple[list, ...] = ()


@dataclass(frozen=True)
class Companion:
    """Rows another app writes with an effect, linked to it by the effect's id, as data:
    `INSERT INTO table (columns..., link) SELECT <rows_sql's columns>, <the new id>`,
    `rows_sql` in the connection's engine's dialect with its `params`. On PostgreSQL it
    is part of the effect's own statement (a round trip fewer on every post that has
    them); on SQLite it is the statement right after the effect's, in its transaction.
    Either way the engine runs it and calls nothing of the other app's while the write
    is open. Both give the `returning` column of the rows written (`Saved.returned`); the
    caller calls `made` with it once they are committed, when any were written; the
    engine never does."""

    made: Callable[[list], None]
    table: str
    columns: tuple[str, ...]
    link: str
    rows_sql: str
    params: tuple
    returning: str

    @property
    def shape(self) -> tuple:
        """What the statement's text depends on (its parameters aside)."""
        return (self.table, self.columns, self.link, self.rows_sql, self.returning)


@dataclass(frozen=True)
class Effect:
    """The one row a write creates, as field values, and its companions' rows. Handed to
    the engine so that on PostgreSQL all are written in the same statement as the
    receipt's bookkeeping."""

    model: type[Model]
    values: Mapping[str, object]
    companions: Sequence[Companion] = ()


@dataclass(frozen=True)
class _Asked:
    """One call of a write: who asks for what (its content), by which route, when."""

    identity: Identity
    content: Mapping[str, object]
    route: str
    now: datetime

    @functools.cached_property
    def packed(self) -> bytes:
        """The content's digests as a new receipt keeps them."""
        return packed_digests(self.content)

    @functools.cached_property
    def per_field(self) -> bytes:
        """The content's digests as receipts made before the versioned packed form keep
        them (16 bytes a field)."""
        return per_field_packed(self.content)

    @functools.cached_property
    def digests(self) -> dict[str, str]:
        """The content's digests as receipts made before the packed form keep them."""
        return field_digests(self.content)


def receipt_replay(
    *,
    identity: Identity,
    content: Mapping[str, object],
    route: str,
    now: datetime,
    model: type[Model],
    after_lost_claim: bool = False,
) -> Saved | None:
    """Answer a request whose receipt is committed (step 1 of the module note); None when
    it is gone (purged). After a lost claim the receipt was committed a moment ago, so a
    receipt gone since is answered by its tombstone (`410`), never None.

    Raises the verdict (deleted, expired, conflict), logged with the attempt.
    """
    asked = _Asked(identity, content, route, now)
    settled = _replay(asked, model)
    if settled is None and after_lost_claim:
        # Purged between the claim and this read: the tombstone says what it was.
        verdict = _tombstone_verdict(identity, now) or RequestExpired()
        _record_attempt(asked, verdict)
        raise verdict
    return settled


def receipt_write(
    *,
    identity: Identity,
    content: Mapping[str, object],
    route: str,
    now: datetime,
    retention: timedelta,
    effect: Effect,
    refusal: Exception | None = None,
    guard: "Guard | None" = None,
) -> Saved | None:
    """Claim `identity` and make `effect` in ONE transaction (steps 2 to 4 of the module
    note); None when the identity already has a committed receipt (replay it).

    After the claim, in the contract's order: a tombstone refuses (`410`), then the
    caller's `refusal` (what it knew before the claim: a pause, a limit), then its
    `guard` (a condition read in the same transaction). A refused write leaves nothing;
    its attempt is logged. A claim that waited past its bound for another attempt raises
    RequestInProgress; a fault, OutcomeUnavailable with the truthful outcome.
    """
    asked = _Asked(identity, content, route, now)
    receipt = Receipt(
        scope=identity.scope,
        operation=identity.operation,
        request_id=identity.request_id,
        packed_digests=asked.packed,
        state=Receipt.State.SUCCEEDED,
        first_route=route,
        attempts=1,
        first_seen_at=now,
        receipt_expires_at=now + retention,
    )
    try:
        written = engines.for_connection().write(
            receipt, asked.identity, effect, route, now, refusal is None, guard
        )
    except Fault as fault:
        answer = fault_answer(
            fault.error, on_identity=fault.on_identity, committing=fault.committing,
            what=f"write for {identity.operation}",
        )
        _record_attempt(asked, answer)
        raise answer from None
    if written is None:
        return None
    receipt, result, tombstone, returned = written
    verdict = (
        statements.tombstone_error(tombstone) if tombstone is not None
        else refusal if refusal is not None
        else guard.error if result is None
        else None
    )
    if verdict is not None:
        _record_attempt(asked, verdict)
        raise verdict
    return Saved(receipt=receipt, result=result, replayed=False, returned=tuple(returned))


@dataclass(frozen=True)
class Guard:
    """What a write needs besides its identity, read in the write's own transaction
    after the claim and the tombstone, and the error that refuses the write when it is
    false: on PostgreSQL an SQL boolean expression with its parameters, folded into the
    write's statement (it may lock what it reads until the write commits: the board's
    reply locks its question); on SQLite `holds`, called in the write's transaction."""

    error: Exception
    sql: str = "TRUE"
    params: tuple = ()
    holds: Callable[[], bool] | None = None


# --- Replays ------------------------------------------------------------------------------


def _replay(asked: _Asked, model: type[Model]) -> Saved | None:
    """Answer a request whose receipt is committed; None when it is gone (purged).

    Raises the verdict (deleted, expired, conflict); the statement logged the attempt.
    """
    identity, content, now = asked.identity, asked.content, asked.now
    try:
        found = engines.for_connection().replay(
            identity, asked, asked.route, now, model,
            lambda receipt: _outcome(receipt, content, now),
        )
    except DatabaseError as error:
        # Only the attempt count may have changed; the entry was saved long before.
        answer = fault_answer(error, on_identity=True, what=f"replay for {identity.operation}")
        if isinstance(answer, RequestInProgress):
            # A delete, a purge or another retry has held this receipt past the bound.
            _record_attempt(asked, answer)
        raise answer from None
    if found is None:
        return None
    receipt, result, outcome = found
    if result is None and receipt.result_id is not None:
        # Not in the replay's own snapshot (never expected: the receipt was committed
        # with its effect before that statement began); read it again to be sure.
        result = model._default_manager.filter(pk=receipt.result_id).first()
    verdict = _answer(outcome, receipt, content)
    if verdict is None and result is None:
        # An effect goes without its receipt only in a purge, past expiry.
        verdict = RequestExpired(expired_at=receipt.receipt_expires_at)
    if verdict is not None:
        raise verdict
    return Saved(receipt=receipt, result=result, replayed=True)


def _outcome(receipt: Receipt, content: Mapping[str, object], now: datetime) -> str:
    """The replay's verdict, as the attempt log writes it: `replayed`, `deleted`,
    `expired` or `conflict`. SQLite's replay runs this; PostgreSQL's judges in SQL (the
    function receipts_replay, receipts/sql/receipts_replay.sql) and returns the same
    word; tests/receipts/test_rules.py compares the two. Either way it is judged once,
    and `_answer` turns the word into the answer."""
    # Deleted and expired win over a content comparison: once the receipt is a tombstone
    # the content cannot be compared any more, and the answer must not change at purge time.
    if receipt.state == Receipt.State.DELETED:
        return "deleted"
    if now >= receipt.receipt_expires_at:
        return "expired"
    # The digests in the form the receipt keeps them: packed (the request's digest, or
    # 16 bytes a field on a receipt made before the versioned form), or as JSON on a
    # receipt made before the packed form (their retries still replay, never 409).
    if receipt.packed_digests is None:
        same = not differing_fields(receipt.digests or {}, field_digests(content))
    else:
        same = packed_same_request(bytes(receipt.packed_digests), content)
    return "replayed" if same else "conflict"


def _answer(
    outcome: str, receipt: Receipt, content: Mapping[str, object]
) -> ReceiptError | None:
    """The error a replay's verdict answers with (None: it replays); a conflict names
    the fields whose digests (a new receipt's field tags) differ."""
    if outcome == "replayed":
        return None
    if outcome == "deleted":
        return RequestDeleted()
    if outcome == "expired":
        return RequestExpired(expired_at=receipt.receipt_expires_at)
    if receipt.packed_digests is None:
        changed = differing_fields(receipt.digests or {}, field_digests(content))
    else:
        changed = differing_packed(bytes(receipt.packed_digests), content)
    return RequestConflict(conflicting_fields=changed, existing_id=receipt.result_id)


# --- Tombstones and the attempt log -----------------------------------------------------------


def tombstones_in_force(*, now: datetime) -> QuerySet[Tombstone]:
    """The tombstones that still answer a retry at `now`: the one rule in Python, used by
    every read through the ORM; the engines' writes send it as
    receipts/sql/tombstone_in_force.sql, with the same day (models.tombstone_today)."""
    return Tombstone.objects.filter(expires_at__gt=tombstone_today(now))


def tombstone_lookup(*, identity: Identity, now: datetime) -> Tombstone | None:
    return tombstones_in_force(now=now).filter(key=identity.key).first()


def _tombstone_verdict(identity: Identity, now: datetime) -> ReceiptError | None:
    tombstone = tombstone_lookup(identity=identity, now=now)
    return None if tombstone is None else statements.tombstone_error(tombstone.reason)


_OUTCOMES = {
    RequestConflict: Attempt.Outcome.CONFLICT,
    RequestDeleted: Attempt.Outcome.DELETED,
    RequestExpired: Attempt.Outcome.EXPIRED,
    RequestInProgress: Attempt.Outcome.IN_PROGRESS,
    OutcomeUnavailable: Attempt.Outcome.UNAVAILABLE,
}


def _record_attempt(asked: _Asked, error: Exception) -> None:
    """Log a call whose transaction rolled back; a failed log never changes the answer."""
    outcome = _OUTCOMES.get(type(error), Attempt.Outcome.REFUSED)
    _save_attempt(
        Attempt(
            identity=asked.identity.key,
            receipt_id=None,
            route=asked.route,
            outcome=outcome,
            detail=attempt_detail(error),
            created_at=asked.now,
        )
    )


def attempt_detail(error: Exception | None) -> str:
    """What the attempt log says of a call's answer: the rule of `outcome_detail` applied
    to the refusal's code (or to a replay when there is none)."""
    code = "replayed" if error is None else getattr(error, "code", type(error).__name__)
    return statements.outcome_detail(code)


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
        log.warning("attempt log write failed with sqlstate %s", sqlstate(error))


def receipt_lookup(*, identity: Identity) -> Receipt | None:
    return Receipt.objects.filter(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id
    ).first()


def receipt_mark_deleted(*, operation: str, result_ids: list[int], now: datetime) -> int:
    """Mark the receipts of deleted results; their digests stay so a retry gets 410 deleted.

    `receipt_expires_at` stays as promised at the write (SPEC 8.1: never moved by a later
    change): the deletion's own life runs from `deleted_at` under the `deletion` policy in
    force at each purge (maintenance/tombstones/purge.py), so the expiry is not where it is kept."""
    return Receipt.objects.filter(of_results(result_ids), operation=operation).update(
        state=Receipt.State.DELETED, deleted_at=now
    )
