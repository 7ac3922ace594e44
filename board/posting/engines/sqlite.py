"""The board's write path on SQLite, chosen in board/posting/engines/__init__.py: its
rules in Python (board/posting/callers.py, limits.py), through the ORM and the
statements every engine shares (board/posting/statements.py). Its write transactions
already exclude each other, so nothing here locks rows."""

from datetime import datetime

from board.models import Entry
from board.posting import limits, statements
from board.posting.statements import Admission, Admitted, Taken
from board.posting.writer_turn import turn_take, writer_turn  # noqa: F401  (the writers' turn)
from receipts.models import Receipt, of_results
from receipts.services import Guard


def admit(asked: Admission) -> Admitted:
    """The caller read, then, with the post's writer turn taken, its counts: the source
    (a caller step 1 refuses is counted against its address under the console's limit),
    and the overall take for an admitted caller counted within its limit and without a
    committed receipt."""
    policy, caller = statements.posting_read(asked.token_hash)
    principal = caller.principal if caller else None
    admitted = caller is not None or asked.anonymous_admitted
    seen = statements.receipt_seen(
        scope=caller.scope if caller else asked.anonymous_scope,
        operation=asked.operation,
        request_id=asked.request_id,
    )
    in_force = limits.hourly_limits(principal, policy)
    turn_take()  # the caller is read: the post's writes begin here
    source = statements.counter_take(
        source=caller.source if caller else asked.address_source,
        limit=in_force.source,
        hour=asked.hour,
    )
    overall = None
    if not seen:
        overall = admitted and source and statements.counter_take(
            source=asked.overall, limit=in_force.overall, hour=asked.hour
        )
    return Admitted(policy=policy, caller=caller, taken=Taken(source, overall, seen))


def question_open(*, parent_id: int, operation: str, now: datetime, error: Exception) -> Guard:
    """The guard of a reply to `parent_id`: a public question whose receipt has not
    expired. SQLite's write transaction already holds it."""

    def holds() -> bool:
        return (
            Entry.objects.filter(
                id=parent_id, type=Entry.Type.QUESTION, visible=True, deleted_at__isnull=True
            ).exists()
            and Receipt.objects.filter(
                of_results([parent_id]), operation=operation, state=Receipt.State.SUCCEEDED,
                receipt_expires_at__gt=now,
            ).exists()
        )

    return Guard(holds=holds, error=error)


def live_entries_locked(live):
    return live
