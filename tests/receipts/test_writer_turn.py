"""SQLite: a post takes its turn on the writers' file lock before it writes, waits while
another writer holds it, and goes on without it rather than fail when the turn takes
longer than the claim's wait bound (board/posting/writer_turn.py)."""

import fcntl
import os
import threading
import time

import pytest
from django.db import connection

from tests.conftest import counts, question

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="the turn is SQLite's alone"),
]


class OtherWriter:
    """Another process's hold on the turn: its own open file on the lock file."""

    def __init__(self) -> None:
        self.descriptor = os.open(f"{connection.settings_dict['NAME']}-writers",
                                  os.O_RDWR | os.O_CREAT, 0o600)

    def take(self) -> bool:
        try:
            fcntl.flock(self.descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def release(self) -> None:
        fcntl.flock(self.descriptor, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.descriptor)


@pytest.fixture
def other_writer():
    writer = OtherWriter()
    yield writer
    writer.close()


def test_a_post_waits_for_the_turn_another_writer_holds(agent, other_writer):
    # given: another writer holds the turn, and lets go after half a second
    assert other_writer.take()
    threading.Timer(0.5, other_writer.release).start()
    started = time.monotonic()

    # when
    response = agent.post(question())

    # then: the post went in after the other writer, not beside it
    assert response.status_code == 201
    assert time.monotonic() - started >= 0.45
    assert counts()["entries"] == 1


def test_a_post_whose_turn_does_not_come_goes_on_without_it(agent, other_writer, settings):
    # given: a writer that holds the turn far past the claim's wait bound
    settings.SETTLE_CLAIM_WAIT_SECONDS = 1
    assert other_writer.take()
    try:
        started = time.monotonic()

        # when
        response = agent.post(question())
        waited = time.monotonic() - started
    finally:
        other_writer.release()

    # then: SQLite itself was free, so the post was saved after the bound
    assert response.status_code == 201
    assert 0.9 <= waited < 5
    assert counts()["entries"] == 1


def test_the_turn_is_free_again_after_a_refused_post(agent, other_writer):
    # given: a conflicting retry, refused inside the write path
    payload = question()
    assert agent.post(payload).status_code == 201
    assert agent.post({**payload, "body": "Different content."}).status_code == 409

    # then: another writer takes the turn at once
    assert other_writer.take()
    other_writer.release()
