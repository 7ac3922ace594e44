"""The board's write path on PostgreSQL, chosen in board/posting/engines/__init__.py: its
rules in SQL, where they cost no round trip of their own."""

from contextlib import nullcontext as writer_turn  # noqa: F401  (no turns: row locks)
from datetime import datetime

from django.db import connection

from board.models import Entry, Principal
from board.posting.statements import Admission, Admitted, Taken, policy_and_caller
from receipts.models import Receipt
from receipts.services import Guard

# The columns `board_post_admit` answers with, in this order (`policy_and_caller` reads the
# first eleven), then the caller's rules as the SQL decided them.
_ADMITTED_COLUMNS = (
    "paused, pause_reason, source_hourly_limit, overall_hourly_limit, token_id, "
    "last_used_at, principal_id, name, hourly_limit, entry_retention, principal_key, seen, "
    "source, counted"
)


def admit(asked: Admission) -> Admitted:
    """The admission in ONE statement: the caller read and the counters counted, the
    overall take only for an admitted caller without a committed receipt, by the function
    `board_post_admit` (board/sql/board_post_admit.sql), whose plan PostgreSQL keeps per
    server connection, with or without a pooler between. The function decides in SQL
    what board/posting/engines/sqlite.py `admit` decides in Python with
    board/posting/callers.py and limits.py (tests/board/test_rules.py compares them)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_ADMITTED_COLUMNS} FROM board_post_admit(%s, %s, %s, %s, %s, %s, %s, "
            "%s, CAST(%s AS bigint), CAST(%s AS bigint), %s, %s)",
            [
                Principal.KEY_PREFIX, asked.token_hash, asked.address_source,
                asked.anonymous_scope, asked.operation, asked.request_id, asked.hour,
                asked.overall, asked.source_default_limit, asked.overall_default_limit,
                # The counters are bookkeeping: outside a caller's transaction they
                # commit without waiting for the WAL flush (the condition and the reason
                # are receipts.engines.postgresql.commit_quietly's; the board's statement
                # reads the condition itself, so a post visits receipts once, to write).
                asked.anonymous_admitted, not connection.in_atomic_block,
            ],
        )
        row = cursor.fetchone()
    policy, caller = policy_and_caller(row)
    seen, source, counted = bool(row[11]), row[12], row[13]
    return Admitted(
        policy=policy,
        caller=caller,
        taken=Taken(
            source=source in counted,
            overall=None if seen else asked.overall in counted,
            seen=seen,
        ),
    )


# Step 6 as the write's guard: a reply's parent is a public question whose receipt has
# not expired. The question is held with FOR KEY SHARE (replies do not block each other)
# until the reply commits: the retention purge claims a thread by locking its question
# (FOR UPDATE SKIP LOCKED), so a purge that comes second leaves the thread alone, and one
# that came first makes the reply wait and find the question gone (422). Without it, a
# reply accepted just before its question's expiry could fail its foreign key at COMMIT:
# an `unknown` outcome.
_QUESTION_OPEN_SQL = (
    f"EXISTS (SELECT 1 FROM {Entry._meta.db_table} WHERE id = %s AND type = %s "
    f"AND visible AND deleted_at IS NULL FOR KEY SHARE) "
    f"AND EXISTS (SELECT 1 FROM {Receipt._meta.db_table} WHERE operation = %s "
    f"AND result_id = %s AND state = %s AND receipt_expires_at > %s)"
)


def question_open(*, parent_id: int, operation: str, now: datetime, error: Exception) -> Guard:
    """The guard of a reply to `parent_id` (the same rule as sqlite.py's, in SQL)."""
    return Guard(
        sql=_QUESTION_OPEN_SQL,
        params=(
            parent_id, Entry.Type.QUESTION.value, operation, parent_id,
            Receipt.State.SUCCEEDED.value, now,
        ),
        error=error,
    )


def live_entries_locked(live):
    """Entries an erasure's batch deletes, locked against a concurrent write."""
    return live.select_for_update()


def turn_take() -> None:
    """No turn to take (see writer_turn): the erasure's batches call it on every engine."""
