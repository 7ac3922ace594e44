"""The write path's hand-written statements on the board's tables (board/models.py).

Why plain SQL here: a profile of new posts (cProfile through the WSGI stack, 300 posts
on PostgreSQL, tests/bench/profile_post.py) put about half the time in waiting on 13
round trips, and 12% in the ORM compiling the same few statements afresh (`as_sql`);
7,540 Python calls a post. With these statements and the engine's (receipts/services.py):
6 round trips, 2,840 calls, no compilation. Each function below is one statement,
written once, with parameters, and says what it replaced.

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

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection

from board.models import AgentToken, HourlyCounter, PostingPolicy, Principal

_POLICY = PostingPolicy._meta.db_table
_TOKENS = AgentToken._meta.db_table
_PRINCIPALS = Principal._meta.db_table
_COUNTERS = HourlyCounter._meta.db_table


@dataclass(frozen=True)
class TokenRow:
    id: int
    last_used_at: datetime | None
    principal: Principal


# Replaces two ORM reads (the policy row by pk, the token with select_related): one
# round trip instead of two, and no query compilation (measured: see the module note).
# The policy row may not exist yet (defaults), and the token may be absent or unknown:
# both are LEFT JOINs to a one-row anchor.
_POSTING_READ_SQL = f"""
    SELECT p.paused, p.pause_reason, p.source_hourly_limit, p.overall_hourly_limit,
        t.id, t.last_used_at, pr.id, pr.name, pr.hourly_limit
    FROM (SELECT 1 AS one) AS anchor
    LEFT JOIN {_POLICY} p ON p.id = 1
    LEFT JOIN {_TOKENS} t ON t.token_hash = %s AND t.revoked_at IS NULL
    LEFT JOIN {_PRINCIPALS} pr ON pr.id = t.principal_id
"""


def posting_read(token_hash: str | None) -> tuple[PostingPolicy, TokenRow | None]:
    """The posting policy and, when a token hash is given, its live token and principal."""
    with connection.cursor() as cursor:
        cursor.execute(_POSTING_READ_SQL, [token_hash])
        row = cursor.fetchone()
    policy = PostingPolicy(pk=1)
    if row[0] is not None:
        policy.paused = bool(row[0])
        policy.pause_reason = row[1]
        policy.source_hourly_limit = row[2]
        policy.overall_hourly_limit = row[3]
    token = None
    if row[4] is not None:
        principal = Principal(pk=row[6], name=row[7], hourly_limit=row[8])
        token = TokenRow(id=row[4], last_used_at=_moment(row[5]), principal=principal)
    return policy, token


@dataclass(frozen=True)
class Taken:
    """What one counters statement did: whether the source was counted, whether the
    overall counter was taken (None: not asked for), whether the identity had a receipt."""

    source: bool
    overall: bool | None
    seen: bool


def counters_take(
    *,
    source: str,
    source_limit: int,
    overall: str,
    overall_limit: int,
    hour: datetime,
    seen_sql: tuple[str, list],
) -> Taken:
    """Count one attempt for `source` and, unless the identity already has a receipt
    (`seen_sql`, folded in), take one from the overall counter: conditional upserts, so
    no process can push a count past its limit, and a refused take is not counted.

    The overall take is provisional (the caller gives it back when no entry is made):
    taken here, in its own short statement, it is never held across the entry's commit.
    A request whose receipt is already committed cannot make an entry, so it takes none.
    Replaces two upserts (each its own commit) and the claim's replay read on PostgreSQL.
    """
    seen_condition, seen_params = seen_sql
    hour_param = connection.ops.adapt_datetimefield_value(hour)
    limit_case = f"CASE WHEN c.source = %s THEN {int(overall_limit)} ELSE {int(source_limit)} END"
    upsert = (
        f" ON CONFLICT (source, hour) DO UPDATE SET count = c.count + 1 "
        f"WHERE c.count < {limit_case} RETURNING source"
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"""
                WITH seen AS (SELECT {seen_condition} AS seen),
                counted AS (
                    INSERT INTO {_COUNTERS} AS c (source, hour, count)
                    SELECT wanted.source, %s, 1
                    FROM (VALUES (%s, {int(source_limit)}), (%s, {int(overall_limit)}))
                        AS wanted (source, lim), seen
                    WHERE wanted.lim > 0 AND (wanted.source = %s OR NOT seen.seen)
                    {upsert}
                )
                SELECT seen.seen, array(SELECT source FROM counted) FROM seen
                """,
                [*seen_params, hour_param, source, overall, source, overall],
            )
            seen, counted = cursor.fetchone()
        else:
            cursor.execute(f"SELECT {seen_condition}", seen_params)
            seen = bool(cursor.fetchone()[0])
            wanted = [(source, source_limit)] + ([] if seen else [(overall, overall_limit)])
            wanted = [(name, limit) for name, limit in wanted if limit > 0]
            counted = []
            if wanted:
                rows = ", ".join(["(%s)"] * len(wanted))
                # `WHERE true`: SQLite's parser needs it before ON CONFLICT after a SELECT.
                cursor.execute(
                    f"INSERT INTO {_COUNTERS} AS c (source, hour, count) "
                    f"SELECT column1, %s, 1 FROM (VALUES {rows}) WHERE true{upsert}",
                    [hour_param, *[name for name, _ in wanted], overall],
                )
                counted = [row[0] for row in cursor.fetchall()]
    return Taken(
        source=source in counted,
        overall=None if seen else overall in counted,
        seen=bool(seen),
    )


def counter_take(*, source: str, limit: int, hour: datetime) -> bool:
    """Count one for `source` this hour unless that would pass `limit` (one upsert)."""
    if limit <= 0:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_COUNTERS} AS c (source, hour, count) VALUES (%s, %s, 1) "
            f"ON CONFLICT (source, hour) DO UPDATE SET count = c.count + 1 "
            f"WHERE c.count < %s RETURNING count",
            [source, connection.ops.adapt_datetimefield_value(hour), limit],
        )
        return cursor.fetchone() is not None


def counter_give_back(*, source: str, hour: datetime) -> None:
    """Return a provisional take; its own short statement, like the take."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_COUNTERS} SET count = count - 1 "
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


def _moment(value) -> datetime | None:
    # PostgreSQL returns aware datetimes; SQLite naive UTC ones, or text.
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
