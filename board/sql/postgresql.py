"""The board's write-path statements on PostgreSQL, chosen in board/sql/__init__.py."""

from contextlib import nullcontext as writer_turn  # noqa: F401  (no turns: row locks)

from django.db import connection

from board.models import Entry
from board.sql.common import ADMITTED_COLUMNS, COUNTERS, counted_within
from receipts.sql.postgresql import no_flush_wait


def admit_count(cursor, caller_cte: str, caller_params: list, hour, overall: str):
    """The admission in ONE statement (board.statements.posting_admit_count): the caller
    read and the counters counted by data-modifying CTEs, the overall take only for an
    admitted caller without a committed receipt. The row, and the sources counted."""
    within_limit = counted_within(
        "(SELECT CASE WHEN c.source = caller.source THEN caller.source_limit "
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
    return row, row[12]


def question_public_locked(question_id: int) -> bool:
    """Whether the question is public, holding it with FOR KEY SHARE (replies do not
    block each other) against the retention purge until this write commits: see
    board.services._question_public_locked."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {Entry._meta.db_table} WHERE id = %s AND type = %s "
            f"AND visible AND deleted_at IS NULL FOR KEY SHARE",
            [question_id, Entry.Type.QUESTION.value],
        )
        return cursor.fetchone() is not None


def live_entries_locked(live):
    """Entries an erasure's batch deletes, locked against a concurrent write."""
    return live.select_for_update()


def turn_take() -> None:
    """No turn to take (see writer_turn): the erasure's batches call it on every engine."""
