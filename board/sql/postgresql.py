"""The board's write-path statements on PostgreSQL, chosen in board/sql/__init__.py."""

from contextlib import nullcontext as writer_turn  # noqa: F401  (no turns: row locks)

from board.models import Entry
from board.sql.common import (
    ADMITTED_COLUMNS,
    COUNTED_WITHIN,
    COUNTERS,
    QUESTION_RECEIPT_LIVE_SQL,
)
from receipts.sql.postgresql import no_flush_wait


def admit_count(cursor, caller_cte: str, caller_params: list, hour, overall: str):
    """The admission in ONE statement (board.statements.posting_admit_count): the caller
    read and the counters counted by data-modifying CTEs, the overall take only for an
    admitted caller without a committed receipt. The row, and the sources counted."""
    within_limit = COUNTED_WITHIN.format(
        limit="(SELECT CASE WHEN c.source = caller.source THEN caller.source_limit "
        "ELSE caller.overall_limit END FROM caller)"
    )
    cursor.execute(
        f"""
        WITH {no_flush_wait()}, {caller_cte},
        counted AS (
            INSERT INTO {COUNTERS} AS c (source, hour, count)
            SELECT wanted.source, %s, 1
            FROM caller, LATERAL (VALUES (caller.source, caller.source_limit),
                (%s, caller.overall_limit)) AS wanted (source, lim)
            WHERE wanted.lim > 0 AND (wanted.source = caller.source
                OR (caller.admitted AND NOT caller.seen))
            {within_limit}
            RETURNING c.source
        )
        SELECT {ADMITTED_COLUMNS}, array(SELECT source FROM counted)
        FROM caller CROSS JOIN quiet
        """,
        [*caller_params, hour, overall],
    )
    row = cursor.fetchone()
    return row, row[13]


# Step 6 as the write's guard (receipts.services.Guard): a reply's parent is a public
# question whose receipt has not expired. The question is held with FOR KEY SHARE
# (replies do not block each other) until the reply commits: the retention purge claims
# a thread by locking its question (FOR UPDATE SKIP LOCKED), so a purge that comes second
# leaves the thread alone, and one that came first makes the reply wait and find the
# question gone (422). Without it, a reply accepted just before its question's expiry
# could fail its foreign key at COMMIT: an `unknown` outcome.
QUESTION_OPEN_SQL = (
    f"EXISTS (SELECT 1 FROM {Entry._meta.db_table} WHERE id = %s AND type = %s "
    f"AND visible AND deleted_at IS NULL FOR KEY SHARE) AND {QUESTION_RECEIPT_LIVE_SQL}"
)


def live_entries_locked(live):
    """Entries an erasure's batch deletes, locked against a concurrent write."""
    return live.select_for_update()


def turn_take() -> None:
    """No turn to take (see writer_turn): the erasure's batches call it on every engine."""
