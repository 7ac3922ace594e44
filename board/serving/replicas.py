"""Read replicas (SPEC 12.1): which database answers a public read.

A public read (the thread list, a thread, its replies; over the API, MCP's read tools or
the public pages) may go to a streaming replica named in SETTLE_REPLICA_URLS; everything
else (writes, the caller's own operation lookup, the console, commands, Celery) stays on
the primary, Django's "default". A replica answers a read only when it holds everything
that reader must see:

- it is not too far behind: it has replayed all the primary had written when this
  process last looked (however idle the primary), or its last replayed commit is at
  most SETTLE_REPLICA_MAX_LAG old;
- the caller's own last write (read-your-writes): after a post commits, the primary's
  WAL position is kept for the caller (its principal, or an anonymous caller's source
  address) for SETTLE_REPLICA_STICKY in Redis (SETTLE_CACHE_URL), where every web
  process sees it, and the caller's reads need a replica that has replayed it;
- the last moderation, erasure or purge: its position is kept the same way under one key
  that every public read checks, so nothing hidden or deleted is served by a replica that
  has not replayed its hiding (SPEC 11.3).

A public read by name (a thread's id, the replies of one) that finds nothing on a replica
asks the primary once before it answers 404: whoever follows a fresh entry's `url` sees
it, although the writer's position is kept for the writer only.

Each process remembers what it last saw of each replica for a second, so a replica is
asked about itself about once a second per process, not once a read; a replica that has
not replayed a reader's position is asked again, once, before the read goes to the
primary. Anything uncertain (Redis not answering, a replica refusing a connection or
failing a read, a position that could not be read after a write) reads from the primary:
replicas take load off it, never correctness.

GitLab's database load balancing is the model; two of its bugs are avoided by design: a
caller's position is never released because one replica caught up (every replica is
checked against it at every read), and the replica list is fixed at start-up
(DATABASES), so it cannot change under a check.
"""

import contextvars
import functools
import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError, connections
from django.http import Http404

from board.exceptions import NotFound

log = logging.getLogger(__name__)

PRIMARY = "default"
LOOK_AGAIN_AFTER = 1.0  # seconds a process trusts what it saw of a replica or the primary
DOWN_FOR = 5.0  # seconds a replica that failed is left alone
EVERYONE = "settle:replicas:everyone"  # the last moderation, erasure or purge
_CALLER = "settle:replicas:caller:"
# Anything Redis or a WAL position read cannot tell is read from the primary: a
# position no replica reaches.
_PRIMARY_ONLY = 2**62

# Redis has no atomic "set if greater": two processes keeping positions at once must
# not lower the one that is kept.
_KEEP_GREATER = """
local kept = redis.call('GET', KEYS[1])
if (not kept) or tonumber(kept) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
"""

_reading_from: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "settle_reading_from", default=None
)
T = TypeVar("T")


def replica_aliases() -> list[str]:
    return settings.SETTLE_REPLICA_ALIASES


class ReplicaRouter:
    """Django's router: reads go where `replica_read` sent them, everything else to the
    primary; only the primary is migrated (a replica replays the primary's schema)."""

    def db_for_read(self, model, **hints) -> str | None:
        return _reading_from.get()

    def db_for_write(self, model, **hints) -> str:
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool:
        return db == PRIMARY


# --- Positions: kept after writes, in Redis --------------------------------------------


@functools.cache
def _redis():
    import redis

    # Short timeouts: a Redis that does not answer sends reads to the primary, quickly.
    return redis.Redis.from_url(
        settings.SETTLE_CACHE_URL, socket_timeout=0.25, socket_connect_timeout=0.25
    )


def written(*, source: str) -> None:
    """After a write by `source` committed: its reads need a replica that replayed it."""
    if replica_aliases():
        _keep(_CALLER + source, settings.SETTLE_REPLICA_STICKY.total_seconds())


def visibility_changed() -> None:
    """After a moderation action, an erasure or a purge committed: every public read
    needs a replica that replayed it. Kept for as long as any replica could lag behind
    it and still be used (a replica later than MAX_LAG is not used anyway), doubled."""
    if replica_aliases():
        seconds = 2 * max(settings.SETTLE_REPLICA_MAX_LAG.total_seconds(),
                          settings.SETTLE_REPLICA_STICKY.total_seconds()) + 60
        _keep(EVERYONE, seconds)


def _keep(key: str, seconds: float) -> None:
    position = _primary_position(fresh=True)
    try:
        _redis().eval(_KEEP_GREATER, 1, key, position, int(seconds * 1000))
    except Exception as error:  # noqa: BLE001 (any Redis failure: reads then use the primary)
        log.warning("could not keep a WAL position: %s", type(error).__name__)


def _required(source: str) -> int:
    try:
        kept = _redis().mget(_CALLER + source, EVERYONE)
    except Exception as error:  # noqa: BLE001
        log.warning("could not read WAL positions: %s", type(error).__name__)
        return _PRIMARY_ONLY
    return max((int(value) for value in kept if value is not None), default=0)


# --- What each replica has replayed -----------------------------------------------------


@dataclass(frozen=True)
class _Seen:
    at: float
    replayed: int | None  # None: not replaying (down, or promoted to a primary)
    lag: float | None  # seconds since its last replayed commit; None: none yet


_seen: dict[str, _Seen] = {}
_primary_seen: list[tuple[float, int]] = []


def _primary_position(*, fresh: bool = False) -> int:
    now = time.monotonic()
    if not fresh and _primary_seen and now - _primary_seen[0][0] < LOOK_AGAIN_AFTER:
        return _primary_seen[0][1]
    try:
        position = connections[PRIMARY].wal_position()
    except DatabaseError as error:
        log.warning("could not read the primary's WAL position: %s", type(error).__name__)
        return _PRIMARY_ONLY
    _primary_seen[:] = [(now, position)]
    return position


def _look(alias: str, *, fresh: bool = False) -> _Seen:
    now = time.monotonic()
    seen = _seen.get(alias)
    if seen is not None and (now - seen.at < (DOWN_FOR if seen.replayed is None else
                                              LOOK_AGAIN_AFTER)) and not fresh:
        return seen
    try:
        replayed, lag = connections[alias].wal_replayed()
        seen = _Seen(at=now, replayed=replayed, lag=lag)
    except DatabaseError as error:
        log.warning("replica %s did not answer: %s", alias, type(error).__name__)
        connections[alias].close()
        seen = _Seen(at=now, replayed=None, lag=None)
    _seen[alias] = seen
    return seen


def _fit(seen: _Seen, primary_at: int) -> bool:
    if seen.replayed is None:
        return False
    if seen.replayed >= primary_at:  # replayed everything: not lagging, however idle
        return True
    return seen.lag is not None and seen.lag <= settings.SETTLE_REPLICA_MAX_LAG.total_seconds()


def replica_for(source: str) -> str:
    """A replica that may answer `source`'s public read now, else the primary."""
    aliases = replica_aliases()
    if not aliases:
        return PRIMARY
    required = _required(source)
    if required >= _PRIMARY_ONLY:
        return PRIMARY
    primary_at = _primary_position()
    for alias in random.sample(aliases, len(aliases)):
        seen = _look(alias)
        if not _fit(seen, primary_at):
            continue
        if seen.replayed < required:
            seen = _look(alias, fresh=True)  # what it had a second ago may be old
            if seen.replayed is None or seen.replayed < required:
                continue
        return alias
    return PRIMARY


@contextmanager
def _reading(alias: str) -> Iterator[None]:
    token = _reading_from.set(alias)
    try:
        yield
    finally:
        _reading_from.reset(token)


def replica_read(run: Callable[[], T], *, source: str, by_name: bool) -> T:
    """`run` (a public read) on a replica fit for `source`, else on the primary; on the
    primary too when the replica fails it, and, for a read `by_name`, when the replica
    found nothing (it may not have replayed a fresh entry someone else wrote)."""
    alias = replica_for(source)
    if alias == PRIMARY:
        return run()
    try:
        with _reading(alias):
            return run()
    except (NotFound, Http404):
        if not by_name:
            raise
    except DatabaseError as error:
        log.warning("read failed on replica %s: %s", alias, type(error).__name__)
        connections[alias].close()
        _seen[alias] = _Seen(at=time.monotonic(), replayed=None, lag=None)
    return run()


def public_read(*, by_name: bool) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """A public read's decorator; its `caller` keyword says whose writes it must see."""

    def decorate(function: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(function)
        def wrapper(*args, **kwargs) -> T:
            return replica_read(
                functools.partial(function, *args, **kwargs),
                source=kwargs["caller"].source, by_name=by_name,
            )

        return wrapper

    return decorate
