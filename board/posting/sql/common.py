"""What the board's statements share on every engine (board/posting/sql/)."""

import uuid
from dataclasses import dataclass

from django.db import connection

from board.models import AgentToken, HourlyCounter, PostingPolicy, Principal
from receipts.models import Receipt
from receipts.statements import RECEIPT_SEEN_SQL

COUNTERS = HourlyCounter._meta.db_table

# The columns every admission answers with, in this order (board.posting.statements reads them),
# then `source_limit, overall_limit, admitted`: the caller's rules as the SQL decided them.
ADMITTED_COLUMNS = (
    "paused, pause_reason, source_hourly_limit, overall_hourly_limit, token_id, "
    "last_used_at, principal_id, name, hourly_limit, entry_retention, principal_key, seen, "
    "source"
)

# The conditional upsert every counter write ends with (the table aliased `c`): one more,
# unless the count has reached `{limit}` (an SQL expression); a refused take is not counted.
COUNTED_WITHIN = (
    "ON CONFLICT (source, hour) DO UPDATE SET count = c.count + 1 WHERE c.count < {limit}"
)

# The second half of step 6 on every engine: the question's receipt has not expired.
# Its parameters: the operation, the question's id, the succeeded state, the moment.
QUESTION_RECEIPT_LIVE_SQL = (
    f"EXISTS (SELECT 1 FROM {Receipt._meta.db_table} WHERE operation = %s "
    f"AND result_id = %s AND state = %s AND receipt_expires_at > %s)"
)


@dataclass(frozen=True)
class Admission:
    """What a post's admission is asked (board.posting.statements.posting_admit_count): each
    engine's `admit_count` answers it in its own statements."""

    token_hash: str | None
    address_source: str
    anonymous_allowed: bool
    anonymous_scope: str
    source_default_limit: int
    overall_default_limit: int
    operation: str
    request_id: uuid.UUID
    hour: object  # adapted for the connection
    overall: str

    @property
    def anonymous_admitted(self) -> bool:
        """Step 1 lets a caller without a token in (a token presented must be live)."""
        return self.token_hash is None and self.anonymous_allowed


def caller_sql(asked: Admission) -> tuple[str, list]:
    """Two CTEs, `presented` and `caller`: the policy and the token as read, then who the
    caller is in SQL (source, source_limit, overall_limit, admitted, seen), the rules of
    `Caller` (`callers.anonymous_caller` for a caller without a live token),
    `limits.source_hourly_limit` and step 1's check. SQLite's admission; PostgreSQL's is
    the same SQL in the function `board_post_admit` (migration board 0005), and
    tests/board/test_rules.py
    holds both to the Python rules."""
    seen_condition = RECEIPT_SEEN_SQL.format(scope="COALESCE(principal_key, %s)")
    cte = f"""presented AS (
            SELECT p.paused, p.pause_reason, p.source_hourly_limit, p.overall_hourly_limit,
                t.id AS token_id, t.last_used_at, pr.id AS principal_id, pr.name,
                pr.hourly_limit, pr.entry_retention,
                CAST(%s AS text) || pr.id AS principal_key
            FROM (SELECT 1 AS one) AS anchor
            LEFT JOIN {PostingPolicy._meta.db_table} p ON p.id = 1
            LEFT JOIN {AgentToken._meta.db_table} t
                ON t.token_hash = %s AND t.revoked_at IS NULL
            LEFT JOIN {Principal._meta.db_table} pr ON pr.id = t.principal_id
        ),
        caller AS (
            SELECT presented.*,
                COALESCE(principal_key, %s) AS source,
                COALESCE(hourly_limit, source_hourly_limit, {int(asked.source_default_limit)})
                    AS source_limit,
                COALESCE(overall_hourly_limit, {int(asked.overall_default_limit)})
                    AS overall_limit,
                (principal_key IS NOT NULL OR {'TRUE' if asked.anonymous_admitted else 'FALSE'})
                    AS admitted,
                {seen_condition} AS seen
            FROM presented
        )"""
    params = [
        Principal.KEY_PREFIX, asked.token_hash, asked.address_source, asked.anonymous_scope,
        asked.operation,
        Receipt._meta.get_field("request_id").get_db_prep_value(asked.request_id, connection),
    ]
    return cte, params
