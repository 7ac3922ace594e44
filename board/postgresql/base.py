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
"""

import time

from django.conf import settings
from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    _last_released: float | None = None

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

    def connect(self) -> None:
        super().connect()
        self._last_released = None
