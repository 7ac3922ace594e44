"""SQLite: writers of the write path take turns on a file lock, not on SQLite's sleeps.

SQLite lets one writer in at a time. A second `BEGIN IMMEDIATE` finds the database
locked and SQLite's busy handler sleeps 1, 2, 5, 10, 15... ms between tries, however
soon the lock is free again: with two gunicorn workers posting, a quarter of the
machine sat idle in those sleeps (measured during `make bench`'s new-post case, from
/proc/stat). So a post takes its turn on an advisory lock (`flock`) on a file beside
the database, and meets SQLite's lock only when something else (the console, a purge)
writes. `writer_turn()` holds the turn for the post's block; `turn_take()` takes it just
before the post's first write, after the caller is read (reading it before the turn made
SQLite new posts x1.06: docs/benchmarks.md).

A waiter first tries again at once, yielding the processor between tries, for up to
2 ms (a turn lasts about half a millisecond), then every 0.1 to 0.2 ms. Sleeping from the
first try woke waiters late: with two workers posting (two endpoints), a fifth of the
machine was still idle; yielding first brought it to 8% and posts x1.06 (interleaved
A/B over HTTP), at the price of the waiter's tries. Adaptive locks do the same: glibc's
adaptive mutex and PostgreSQL's spinlocks spin briefly before they sleep.

Still needed with the engine's statements: with `turn_take` a no-op, two `make bench`
runs gave new posts 519 and 484 req/s against 798 and 766 with it, 0.21 and 0.20 of the
plain insert, under the 0.25 an embedded default needs (docs/benchmarks.md).

The turn never changes an outcome: a post that waited `SETTLE_CLAIM_WAIT_SECONDS`
for it goes on without it, and SQLite's own busy timeout decides, as before. A
process that dies holding the turn lets go of it with its file descriptor. Each
thread has its own descriptor: `flock` excludes open files, not processes.
"""

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator

from django.conf import settings
from django.db import connection

_FIRST_WAIT = 0.0001
_LONGEST_WAIT = 0.0002
_YIELDING = 0.002
_descriptors = threading.local()  # .file, .key: this thread's open lock file
_turn = threading.local()  # .descriptor, .taken, .held: the post this thread runs


@contextlib.contextmanager
def writer_turn() -> Iterator[None]:
    """The block of one post's writes on SQLite: the turn `turn_take()` takes in it is
    let go at its end. SQLite's alone: the post and the erasure's batches reach it only
    through board/posting/engines/sqlite.py (PostgreSQL's turn is no turn, and its
    database's name no file); nothing for an in-memory database."""
    name = str(connection.settings_dict["NAME"])
    if name == ":memory:" or name.startswith("file:"):
        yield
        return
    key = (name, os.getpid())
    if getattr(_descriptors, "key", None) != key:
        # A file object, not a bare descriptor: it closes when the thread's storage goes.
        _descriptors.file = open(f"{name}-writers", "ab")  # noqa: SIM115 (lives with the thread)
        _descriptors.key = key
    descriptor = _descriptors.file.fileno()
    _turn.descriptor, _turn.taken, _turn.held = descriptor, False, False
    try:
        yield
    finally:
        if _turn.held:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
        _turn.descriptor, _turn.held = None, False


def turn_take() -> None:
    """Take the turn of the `writer_turn()` block this thread runs, once, before its
    first write; nothing outside such a block. While another writer holds it, the tries
    yield the processor for `_YIELDING`, then sleep between them (the module note says
    why); after `SETTLE_CLAIM_WAIT_SECONDS` the post goes on without it."""
    descriptor = getattr(_turn, "descriptor", None)
    if descriptor is None or _turn.taken:
        return
    _turn.taken = True
    start = time.monotonic()
    deadline = start + settings.SETTLE_CLAIM_WAIT_SECONDS
    yielding_until = start + _YIELDING
    wait = _FIRST_WAIT
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _turn.held = True
            return
        except BlockingIOError:
            now = time.monotonic()
            if now >= deadline:
                return
            if now < yielding_until:
                os.sched_yield()
                continue
            time.sleep(wait)
            wait = min(wait * 2, _LONGEST_WAIT)
