"""The board's write-path statements on PostgreSQL, chosen in board/posting/sql/__init__.py."""

from contextlib import nullcontext as writer_turn  # noqa: F401  (no turns: row locks)

from board.models import Entry, Principal
from board.posting.sql.common import ADMITTED_COLUMNS, QUESTION_RECEIPT_LIVE_SQL, Admission
from receipts.sql.postgresql import commit_quietly


def admit_count(cursor, asked: Admission) -> tuple[tuple, list[str]]:
    """The admission in ONE statement (board.posting.statements.posting_admit_count): the caller
    read and the counters counted, the overall take only for an admitted caller without a
    committed receipt, by the function `board_post_admit` (migration board 0005), whose
    plan PostgreSQL keeps per server connection, with or without a pooler between.
    The row (ADMITTED_COLUMNS, source_limit, overall_limit, admitted), and the sources
    counted."""
    cursor.execute(
        f"SELECT {ADMITTED_COLUMNS}, source_limit, overall_limit, admitted, counted "
        "FROM board_post_admit(%s, %s, %s, %s, %s, %s, %s, %s, "
        "CAST(%s AS bigint), CAST(%s AS bigint), %s, %s)",
        [
            Principal.KEY_PREFIX, asked.token_hash, asked.address_source,
            asked.anonymous_scope, asked.operation, asked.request_id, asked.hour,
            asked.overall, asked.source_default_limit, asked.overall_default_limit,
            asked.anonymous_admitted, commit_quietly(),
        ],
    )
    row = cursor.fetchone()
    return row[:16], row[16]


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
