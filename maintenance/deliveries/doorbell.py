"""The write path's doorbell: the send messages a process owes for the deliveries it
committed within a few milliseconds of each other go out as one, from a thread of its own.

Why: a Celery publish (`apply_async`: routing, the message, kombu's producer, the
broker's put) costs a web worker about a millisecond of CPU, measured in-process as
1.1 to 1.5 ms a post on the embedded broker and about 1 ms on Redis: with two endpoints
it was a quarter of a new post's cost. Deliveries committed close together now share one
message (`deliveries_send`, which the Celery worker fans out one per delivery), so under
load the cost per post falls with the size of the batch; a post on a quiet service has
its message queued `WINDOW` after its commit.

What it keeps (SPEC 9): a delivery is committed, `accepted` with its due time, before it
is rung for. A message that never leaves (the process is killed inside the window, the
broker is down) delays the delivery until beat's minute sweep finds it due, exactly as
a broker outage does; a process that exits normally publishes what it holds first.

The messages are named, not imported: `deliveries_enqueue` sends the tasks of
`maintenance.deliveries.tasks` by their names, so the tasks import the sending code and
nothing here imports the tasks (the one-way order that keeps out an import cycle). The
app imports the tasks in `ready()`, so a named message still goes through `SettleTask`.
"""

import atexit
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from board.celery import app

# The deliveries' logger keeps the name operators' filters and alerts know.
log = logging.getLogger("maintenance.outbox")

WINDOW = 0.05  # seconds a rung delivery may wait for others to share its message
# Under this, the next attempt is a task countdown; above, beat's sweep picks it up.
COUNTDOWN_LIMIT = timedelta(minutes=1)
# The send tasks (maintenance/deliveries/tasks.py), by name.
SEND_ONE = "maintenance.delivery_send"
SEND_MANY = "maintenance.deliveries_send"

Publish = Callable[[list[uuid.UUID], timedelta], int]


class Doorbell:
    def __init__(self, publish: Publish, *, window: float = WINDOW) -> None:
        self._publish = publish
        self._window = window
        self._lock = threading.Lock()
        self._rung = threading.Condition(self._lock)
        self._pending: list[uuid.UUID] = []
        self._delay = timedelta(0)
        self._thread: threading.Thread | None = None
        self._owner_pid: int | None = None

    def ring(self, ids: list[uuid.UUID], *, delay: timedelta) -> None:
        """Queue the send for these committed deliveries, within `WINDOW`; never raises."""
        with self._lock:
            self._pending.extend(ids)
            # One countdown for the batch: the longest, so no delivery is tried before
            # it is due (an early try would find it not due and leave it to the sweep).
            self._delay = max(self._delay, delay)
            self._thread_started()
            self._rung.notify()

    def flush(self) -> int:
        """Publish what is held now, in this thread; returns how many were queued."""
        with self._lock:
            ids, delay = self._pending, self._delay
            self._pending, self._delay = [], timedelta(0)
        return self._publish(ids, delay) if ids else 0

    def _thread_started(self) -> None:
        # A forked child (a gunicorn worker) inherits the object but not the thread.
        if self._owner_pid == os.getpid() and self._thread and self._thread.is_alive():
            return
        if self._owner_pid != os.getpid():
            atexit.register(self.flush)
        self._owner_pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="settle-doorbell", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending:
                    self._rung.wait()
            time.sleep(self._window)
            self.flush()


def deliveries_enqueue(ids: list[uuid.UUID], *, delay: timedelta = timedelta(0)) -> int:
    """Queue the send for these deliveries; returns how many were queued.

    One message whatever the number of deliveries (the worker fans it out): the write
    path's doorbell sends one for all it was rung for within its window. Never raises: a
    broker that is down must not fail a post that is already saved; the delivery is
    `accepted` with its due time stored, so the minute sweep sends it.
    """
    if not ids or delay >= COUNTDOWN_LIMIT:
        return 0  # the sweep sends it when it is due
    countdown = max(delay.total_seconds(), 0)
    try:
        if len(ids) == 1:
            message = app.signature(SEND_ONE, args=[str(ids[0])])
        else:
            message = app.signature(SEND_MANY, args=[[str(pk) for pk in ids]])
        message.apply_async(countdown=countdown, retry=False)
    except Exception as error:  # any broker failure: the sweep is the fallback
        log.warning("delivery not queued (%s); the sweep will send it", type(error).__name__)
        return 0
    return len(ids)


doorbell = Doorbell(lambda ids, delay: deliveries_enqueue(ids, delay=delay))
