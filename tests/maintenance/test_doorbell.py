"""The write path's doorbell: deliveries rung for close together share one send message,
a lone one leaves within the window, and a process that exits publishes what it holds.

The doorbell takes its publish function as a parameter (outbox passes the Celery
enqueue); these tests pass one that records, to see how rings become messages. That the
real one reaches a real worker is tests/maintenance/test_deliveries_worker.py.
"""

import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta

from maintenance.deliveries.doorbell import Doorbell


class Published:
    def __init__(self) -> None:
        self.messages: list[tuple[list[uuid.UUID], timedelta]] = []
        self.arrived = threading.Event()

    def __call__(self, ids: list[uuid.UUID], delay: timedelta) -> int:
        self.messages.append((list(ids), delay))
        self.arrived.set()
        return len(ids)


def test_deliveries_rung_for_within_the_window_share_one_message():
    published = Published()
    doorbell = Doorbell(published, window=0.5)
    first, second, third = ([uuid.uuid4(), uuid.uuid4()] for _ in range(3))

    doorbell.ring(first, delay=timedelta(0))
    doorbell.ring(second, delay=timedelta(0))
    doorbell.ring(third, delay=timedelta(0))

    assert published.arrived.wait(5)
    time.sleep(0.2)
    assert published.messages == [(first + second + third, timedelta(0))]


def test_a_lone_delivery_leaves_within_the_window():
    published = Published()
    doorbell = Doorbell(published, window=0.05)
    ids = [uuid.uuid4()]
    rung = time.monotonic()

    doorbell.ring(ids, delay=timedelta(0))

    assert published.arrived.wait(5)
    assert time.monotonic() - rung < 1
    assert published.messages == [(ids, timedelta(0))]


def test_a_batch_waits_for_the_longest_countdown_in_it():
    # so that no delivery in it is tried before it is due
    published = Published()
    doorbell = Doorbell(published, window=0.3)

    doorbell.ring([uuid.uuid4()], delay=timedelta(seconds=2))
    doorbell.ring([uuid.uuid4()], delay=timedelta(seconds=5))

    assert published.arrived.wait(5)
    [(ids, delay)] = published.messages
    assert len(ids) == 2 and delay == timedelta(seconds=5)


def test_the_next_batch_starts_empty():
    published = Published()
    doorbell = Doorbell(published, window=0.05)
    doorbell.ring([uuid.uuid4()], delay=timedelta(seconds=5))
    assert published.arrived.wait(5)
    published.arrived.clear()

    later = [uuid.uuid4()]
    doorbell.ring(later, delay=timedelta(0))

    assert published.arrived.wait(5)
    assert published.messages[-1] == (later, timedelta(0))


def test_a_process_that_exits_publishes_what_it_still_holds(tmp_path):
    # given: a process rings with a window far longer than it lives
    record = tmp_path / "published.txt"
    program = f"""
import uuid
from datetime import timedelta
from maintenance.deliveries.doorbell import Doorbell

def publish(ids, delay):
    with open({str(record)!r}, "a") as handle:
        handle.write(" ".join(str(pk) for pk in ids))
    return len(ids)

doorbell = Doorbell(publish, window=60)
doorbell.ring([uuid.UUID(int=1), uuid.UUID(int=2)], delay=timedelta(0))
"""
    # when: it exits normally at once
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", program], check=True, timeout=30)

    # then: it published on its way out, without waiting out the window
    assert time.monotonic() - started < 30
    assert record.read_text() == f"{uuid.UUID(int=1)} {uuid.UUID(int=2)}"
