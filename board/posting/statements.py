"""The write path's hand-written statements on the board's tables (board/models.py).

Why plain SQL here: a profile of new posts (cProfile through the WSGI stack, 300 posts
on PostgreSQL, tests/bench/profile_post.py) put about half the time in waiting on 13
round trips, and 12% in the ORM compiling the same few statements afresh (`as_sql`);
7,540 Python calls a post. With these statements and the engine's (receipts/services.py):
6 round trips, 2,840 calls, no compilation; on PostgreSQL the token read and the
counters are now one statement (board/posting/engines/postgresql.py `admit`). Each
function below is one statement, written once for every engine, with parameters, in a
`.sql` file of board/sql/ (no engine folder: both engines run the same text).

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

from board.models import PostingPolicy, Principal
from receipts.function_file import statement_file
from receipts.models import Receipt

POSTING_READ_SQL = "board/sql/posting_read.sql"
RECEIPT_SEEN_SQL = "board/sql/receipt_seen.sql"
COUNTER_TAKE_SQL = "board/sql/counter_take.sql"
COUNTER_GIVE_BACK_SQL = "board/sql/counter_give_back.sql"
TOKEN_TOUCH_SQL = "board/sql/token_touch.sql"


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


def posting_read(token_hash: str | None) -> tuple[PostingPolicy, Caller | None]:
    """The posting policy and, when a token hash is given, the caller of its live token."""
    with connection.cursor() as cursor:
        cursor.execute(statement_file(POSTING_READ_SQL), {
            "principal_prefix": Principal.KEY_PREFIX, "presented_hash": token_hash,
        })
        return policy_and_caller(cursor.fetchone())


def policy_and_caller(row) -> tuple[PostingPolicy, Caller | None]:
    """The policy and the token's caller of a row that starts with posting_read.sql's
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


_REQUEST_ID = Receipt._meta.get_field("request_id")


def receipt_seen(*, scope: str, operation: str, request_id: uuid.UUID) -> bool:
    """Whether the identity has a committed receipt. A statement, not the ORM's
    `exists()`: on SQLite, in one process, 29 µs against 223."""
    with connection.cursor() as cursor:
        cursor.execute(statement_file(RECEIPT_SEEN_SQL), {
            "scope": scope, "operation": operation,
            "request_id": _REQUEST_ID.get_db_prep_value(request_id, connection),
        })
        return bool(cursor.fetchone()[0])


def counter_take(*, source: str, limit: int, hour: datetime) -> bool:
    """Count one for `source` this hour unless that would pass `limit` (one upsert)."""
    if limit <= 0:
        return False
    with connection.cursor() as cursor:
        cursor.execute(statement_file(COUNTER_TAKE_SQL), {
            "source": source, "hour": connection.ops.adapt_datetimefield_value(hour),
            "limit": limit,
        })
        return cursor.fetchone() is not None


def counter_give_back(*, source: str, hour: datetime) -> None:
    """Return a provisional take; its own short statement, like the take."""
    with connection.cursor() as cursor:
        cursor.execute(statement_file(COUNTER_GIVE_BACK_SQL), {
            "source": source, "hour": connection.ops.adapt_datetimefield_value(hour),
        })


def token_touch(*, token_id: int, now: datetime) -> None:
    """Record a token's last use (replaces a queryset update)."""
    with connection.cursor() as cursor:
        cursor.execute(statement_file(TOKEN_TOUCH_SQL), {
            "used_at": connection.ops.adapt_datetimefield_value(now), "token_id": token_id,
        })

