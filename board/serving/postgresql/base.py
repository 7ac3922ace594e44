"""Django's PostgreSQL backend with an idle-aware connection health check.

`CONN_HEALTH_CHECKS` makes Django send `SELECT 1` before the first query of every
request that reuses a connection. Under load that probe is one more round trip on each
post (a replay is three statements; the probe made it four: 10% of a gunicorn worker's
samples in a py-spy profile of replays on PostgreSQL), and it proves only what the
previous request, milliseconds earlier, already proved. So the probe runs only for a
connection that has sat idle for `SETTLE_DB_HEALTH_CHECK_IDLE_SECONDS` (1 s by default):
the connection a restart, a failover, an idle timeout or a firewall most likely broke.

What that leaves: a connection broken in the sub-second gap between two requests meets
its break on the request's first statement, which then answers `503 unavailable` with
`outcome: not_committed` (nothing was written), and Django closes the connection so the
next request reconnects. A server restart under load fails the requests in flight anyway.

Every transaction is also bounded in how long it waits for a lock (`lock_timeout` of
SETTLE_CLAIM_WAIT_SECONDS), set with SET LOCAL before its first statement: transaction
state, which a pooler in transaction mode (PgBouncer) keeps, where a connection option
or a session-level SET would not be. A transaction whose first statement sets the bound
itself (the claim: receipts/sql/postgresql/claim.sql; a replay: its function
receipts_replay) spends no round trip on it.
"""

import time

from django.conf import settings
from django.db.backends.postgresql import base

# What a statement that bounds its own transaction holds: the claim's set_config
# (receipts/sql/postgresql/claim.sql), or a call of the replay's function, which sets it
# first.
_SETS_ITS_BOUND = ("set_config('lock_timeout'", "receipts_replay(")


class DatabaseWrapper(base.DatabaseWrapper):
    _last_released: float | None = None
    _bounded = False  # the open transaction has its lock wait bound

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.execute_wrappers.append(self._bound_the_transaction)

    def _set_autocommit(self, autocommit: bool) -> None:
        super()._set_autocommit(autocommit)
        self._bounded = False

    def _bound_the_transaction(self, execute, sql, params, many, context):
        # Before the first statement of a transaction (a nested atomic's SAVEPOINT
        # included, so the SET is never undone by a rollback to a savepoint).
        if not self._bounded and not self.autocommit:
            self._bounded = True
            if not any(sets in sql for sets in _SETS_ITS_BOUND):
                ms = int(settings.SETTLE_CLAIM_WAIT_SECONDS * 1000)
                context["cursor"].execute(f"SET LOCAL lock_timeout = {ms}")
        return execute(sql, params, many, context)

    def close_if_unusable_or_obsolete(self) -> None:
        # Django calls this when a request (or a Celery task) starts and when it ends:
        # the gap between an end and the next start is how long the connection sat idle.
        super().close_if_unusable_or_obsolete()
        now = time.monotonic()
        if (
            self.connection is not None
            and not self.health_check_done
            and self._last_released is not None
            and now - self._last_released < settings.SETTLE_DB_HEALTH_CHECK_IDLE_SECONDS
        ):
            self.health_check_done = True
        self._last_released = now

    # Where the server's WAL is (board/serving/replicas.py): bytes from 0/0, so positions
    # compare as integers in Python and in Redis.
    def wal_position(self) -> int:
        """The primary's current WAL write position."""
        with self.cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")
            return int(cursor.fetchone()[0])

    def wal_replayed(self) -> tuple[int | None, float | None]:
        """A standby's replayed WAL position (None when it is not replaying) and the age
        in seconds of the last commit it replayed (None before the first)."""
        with self.cursor() as cursor:
            cursor.execute(
                "SELECT pg_last_wal_replay_lsn() - '0/0'::pg_lsn,"
                " EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())"
            )
            replayed, lag = cursor.fetchone()
        return (None if replayed is None else int(replayed),
                None if lag is None else float(lag))

    def advisory_xact_locks(self, namespace: int, keys: list[int]) -> None:
        """Take these advisory locks in the order given, each held to the transaction's
        end (the login throttle's: moderation/access/throttling.py)."""
        with self.cursor() as cursor:
            for key in keys:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [namespace, key])

    def connect(self) -> None:
        super().connect()
        self._last_released = None
        self._bounded = False
