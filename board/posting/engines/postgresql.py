"""The board's write path on PostgreSQL, chosen in board/posting/engines/__init__.py: its
rules in SQL, where they cost no round trip of their own."""

from contextlib import nullcontext as writer_turn  # noqa: F401  (no turns: row locks)
from datetime import datetime

from django.db import connection

from board.models import Entry, Principal
from board.posting.statements import Admission, Admitted, Taken, policy_and_caller
from receipts.function_file import statement_file
from receipts.models import Receipt
from receipts.services import Guard

ADMIT_SQL = "board/sql/postgresql/admit.sql"
QUESTION_OPEN_SQL = "board/sql/postgresql/question_open.sql"


def admit(asked: Admission) -> Admitted:
    """The admission in ONE statement (admit.sql, which says why)."""
    with connection.cursor() as cursor:
        cursor.execute(statement_file(ADMIT_SQL), {
            "principal_prefix": Principal.KEY_PREFIX, "presented_hash": asked.token_hash,
            "address_source": asked.address_source, "anonymous_scope": asked.anonymous_scope,
            "post_operation": asked.operation, "post_request_id": asked.request_id,
            "counted_hour": asked.hour, "overall_source": asked.overall,
            "source_default_limit": asked.source_default_limit,
            "overall_default_limit": asked.overall_default_limit,
            "anonymous_admitted": asked.anonymous_admitted,
            "commit_quietly": not connection.in_atomic_block,
        })
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


def question_open(*, parent_id: int, operation: str, now: datetime, error: Exception) -> Guard:
    """The guard of a reply to `parent_id`: question_open.sql (the same rule as
    sqlite.py's, in SQL)."""
    return Guard(
        sql=_question_open_code(),
        params=(
            parent_id, Entry.Type.QUESTION.value, operation, parent_id, parent_id, parent_id,
            Receipt.State.SUCCEEDED.value, now,
        ),
        error=error,
    )


def _question_open_code() -> str:
    return statement_file(QUESTION_OPEN_SQL)


def live_entries_locked(live):
    """Entries an erasure's batch deletes, locked against a concurrent write."""
    return live.select_for_update()


def turn_take() -> None:
    """No turn to take (see writer_turn): the erasure's batches call it on every engine."""
