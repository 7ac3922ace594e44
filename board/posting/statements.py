"""The write path's hand-written statements on the board's tables (board/models.py).

Why plain SQL here: a profile of new posts (cProfile through the WSGI stack, 300 posts
on PostgreSQL, tests/bench/profile_post.py) put about half the time in waiting on 13
round trips, and 12% in the ORM compiling the same few statements afresh (`as_sql`);
7,540 Python calls a post. With these statements and the engine's (receipts/services.py):
6 round trips, 2,840 calls, no compilation; on PostgreSQL the token read and the
counters are now one statement (board/posting/engines/postgresql.py `admit`). Each
function below is one statement, written once for every engine, with parameters.

On the rate-limit counters (SPEC 5.1 steps 2 and 5), PostgreSQL: `board_hourlycounter`
is an UNLOGGED table (migration 0002). A transaction that writes only unlogged tables
commits without waiting for a WAL flush, so a counter upsert, in its own autocommit
statement, holds the hot counter row for microseconds instead of across a durable
commit. The price: after a crash PostgreSQL empties the table, so the counts of the
current hour start again from zero; an hourly rate limit briefly more lenient is
harmless. (The alternative, `SET LOCAL synchronous_commit = off` in a transaction of its
own, costs three more round trips a post.) SQLite needs nothing: its commits in WAL mode
with synchronous=NORMAL do not sync, and its writes serialize anyway.
"""

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection

from board.models import AgentToken, HourlyCounter, PostingPolicy, Principal
from receipts.models import Receipt

COUNTERS = HourlyCounter._meta.db_table
_POLICY = PostingPolicy._meta.db_table
_TOKENS = AgentToken._meta.db_table
_PRINCIPALS = Principal._meta.db_table


@dataclass(frozen=True)
class Caller:
    """Who calls: a principal's scope (its key, read with its token) is both its
    idempotency scope and its rate-limit source; an anonymous caller (board.posting.callers,
    where the board imports this from) shares one scope, and its source is its
    address's. Defined with the statements that read it from a token row."""

    principal: Principal | None
    scope: str
    source: str
    # The token the caller presented, and when it was last recorded as used: a post that
    # succeeds records its use (at most once a minute) without reading the token again.
    token_id: int | None = None
    token_used_at: datetime | None = None


# Replaces two ORM reads (the policy row by pk, the token with select_related): one
# round trip instead of two, and no query compilation (measured: see the module note).
# The policy row may not exist yet (defaults), and the token may be absent or unknown:
# both are LEFT JOINs to a one-row anchor.
_POSTING_READ_SQL = f"""
    SELECT p.paused, p.pause_reason, p.source_hourly_limit, p.overall_hourly_limit,
        t.id, t.last_used_at, pr.id, pr.name, pr.hourly_limit, pr.entry_retention,
        CAST(%s AS text) || pr.id
    FROM (SELECT 1 AS one) AS anchor
    LEFT JOIN {_POLICY} p ON p.id = 1
    LEFT JOIN {_TOKENS} t ON t.token_hash = %s AND t.revoked_at IS NULL
    LEFT JOIN {_PRINCIPALS} pr ON pr.id = t.principal_id
"""


def posting_read(token_hash: str | None) -> tuple[PostingPolicy, Caller | None]:
    """The posting policy and, when a token hash is given, the caller of its live token."""
    with connection.cursor() as cursor:
        cursor.execute(_POSTING_READ_SQL, [Principal.KEY_PREFIX, token_hash])
        return policy_and_caller(cursor.fetchone())


def policy_and_caller(row) -> tuple[PostingPolicy, Caller | None]:
    """The policy and the token's caller of a row that starts with `_POSTING_READ_SQL`'s
    columns; the principal's own entry retention comes with it, so a post reads it for
    free."""
    policy = PostingPolicy(pk=1)
    if row[0] is not None:
        policy.paused = bool(row[0])
        policy.pause_reason = row[1]
        policy.source_hourly_limit = row[2]
        policy.overall_hourly_limit = row[3]
    caller = None
    if row[4] is not None:
        principal = Principal(
            pk=row[6], name=row[7], hourly_limit=row[8], entry_retention=row[9]
        )
        # PostgreSQL returns aware datetimes; SQLite naive UTC ones, or text.
        used = row[5]
        if used is not None and not isinstance(used, datetime):
            used = datetime.fromisoformat(used)
        if used is not None and used.tzinfo is None:
            used = used.replace(tzinfo=UTC)
        caller = Caller(
            principal=principal, scope=row[10], source=row[10], token_id=row[4],
            token_used_at=used,
        )
    return policy, caller


@dataclass(frozen=True)
class Admission:
    """What a post's admission is asked (board.posting.callers.post_admit): each engine's
    `admit` answers it (board/posting/engines/)."""

    token_hash: str | None
    address_source: str
    anonymous_allowed: bool
    anonymous_scope: str
    source_default_limit: int
    overall_default_limit: int
    operation: str
    request_id: uuid.UUID
    hour: datetime
    overall: str

    @property
    def anonymous_admitted(self) -> bool:
        """Step 1 lets a caller without a token in (a token presented must be live)."""
        return self.token_hash is None and self.anonymous_allowed


@dataclass(frozen=True)
class Taken:
    """What the admission's count did: whether the source was counted, whether the
    overall counter was taken (None: not asked for), whether the identity had a receipt."""

    source: bool
    overall: bool | None
    seen: bool


@dataclass(frozen=True)
class Admitted:
    """What an admission read, and what it counted."""

    policy: PostingPolicy
    caller: Caller | None  # None: no live token (board.posting.callers decides who that is)
    taken: Taken


_RECEIPTS = Receipt._meta.db_table
_REQUEST_ID = Receipt._meta.get_field("request_id")


def receipt_seen(*, scope: str, operation: str, request_id: uuid.UUID) -> bool:
    """Whether the identity has a committed receipt. A statement, not the ORM's
    `exists()`: on SQLite, in one process, 29 µs against 223."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {_RECEIPTS} WHERE scope = %s AND operation = %s "
            f"AND request_id = %s)",
            [scope, operation, _REQUEST_ID.get_db_prep_value(request_id, connection)],
        )
        return bool(cursor.fetchone()[0])


# The conditional upsert every counter write ends with (the table aliased `c`): one more,
# unless the count has reached `{limit}` (an SQL expression); a refused take is not counted.
COUNTED_WITHIN = (
    "ON CONFLICT (source, hour) DO UPDATE SET count = c.count + 1 WHERE c.count < {limit}"
)


def counter_take(*, source: str, limit: int, hour: datetime) -> bool:
    """Count one for `source` this hour unless that would pass `limit` (one upsert)."""
    if limit <= 0:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {COUNTERS} AS c (source, hour, count) VALUES (%s, %s, 1) "
            f"{COUNTED_WITHIN.format(limit='%s')} RETURNING count",
            [source, connection.ops.adapt_datetimefield_value(hour), limit],
        )
        return cursor.fetchone() is not None


def counter_give_back(*, source: str, hour: datetime) -> None:
    """Return a provisional take; its own short statement, like the take."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {COUNTERS} SET count = count - 1 "
            f"WHERE source = %s AND hour = %s AND count > 0",
            [source, connection.ops.adapt_datetimefield_value(hour)],
        )


def token_touch(*, token_id: int, now: datetime) -> None:
    """Record a token's last use (replaces a queryset update)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TOKENS} SET last_used_at = %s WHERE id = %s",
            [connection.ops.adapt_datetimefield_value(now), token_id],
        )

