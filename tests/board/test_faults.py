"""Transient faults answer 503 with a truthful `outcome`, and a retry settles them.

Each fault is real: a backend killed from another connection, a lock held by another
transaction, a commit whose acknowledgement is lost after the commit happened.
"""

import sqlite3
import threading

import psycopg
import pytest
from django.db import OperationalError, connection
from django.test import Client

from board.models import Entry
from board.signals import entry_created
from tests.conftest import counts, question

pytestmark = pytest.mark.django_db(transaction=True)

only_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's busy lock")


def other_connection() -> psycopg.Connection:
    """A second PostgreSQL session to the test database, outside Django."""
    params = connection.settings_dict
    return psycopg.connect(
        dbname=params["NAME"], user=params["USER"], host=params["HOST"],
        port=params["PORT"] or 5432, password=params["PASSWORD"] or None, autocommit=True,
    )


def post(payload: dict):
    response = Client().post("/api/v1/entries", payload, content_type="application/json")
    connection.close_if_unusable_or_obsolete()
    return response


@pytest.mark.postgres
def test_it_answers_not_committed_when_the_connection_dies_between_the_writes():
    # given: the entry is written (entry_created is sent inside its transaction), then the
    # backend is killed, and the transaction's next write (a receiver's, as the outbox
    # writes its row) meets the dead connection before COMMIT is ever sent
    killer = other_connection()

    def kill_backend(sender, entry, now, **kwargs):
        # With a timeout, pg_terminate_backend returns once the backend is gone.
        killer.execute(
            "SELECT pg_terminate_backend(%s, 5000)", [connection.connection.info.backend_pid]
        )
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    entry_created.connect(kill_backend, sender=Entry)
    try:
        # when
        response = post(question())
    finally:
        entry_created.disconnect(kill_backend, sender=Entry)
        killer.close()

    # then
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "unavailable"
    assert error["outcome"] == "not_committed"
    assert response["Retry-After"]
    assert counts()["entries"] == 0
    assert counts()["receipts"] == 0


def test_it_answers_unknown_when_the_commit_is_lost_and_the_retry_replays(monkeypatch):
    # given: COMMIT reaches the database, but its acknowledgement never comes back
    real_commit = connection._commit
    lost = []

    def commit_then_lose_the_answer():
        real_commit()
        if not lost:
            lost.append(True)
            raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(connection, "_commit", commit_then_lose_the_answer)
    payload = question()

    # when
    response = post(payload)
    retry = post(payload)

    # then
    assert response.status_code == 503
    assert response.json()["error"]["outcome"] == "unknown"
    assert retry.status_code == 200
    assert retry.json()["replayed"] is True
    assert counts()["entries"] == 1


@pytest.mark.postgres
def test_it_answers_in_progress_while_another_transaction_holds_the_claim():
    # given: a first request holds its claim (inside its transaction) for longer than 5 s
    payload = question()
    holding, release = threading.Event(), threading.Event()
    holder = threading.current_thread()

    def hold_the_claim(sender, entry, now, **kwargs):
        if threading.current_thread() is not holder:
            holding.set()
            release.wait(20)

    entry_created.connect(hold_the_claim, sender=Entry)
    first = {}
    worker = threading.Thread(target=lambda: first.update(response=post(payload)))
    try:
        worker.start()
        assert holding.wait(10)

        # when
        waiting = post(payload)
    finally:
        release.set()
        worker.join()
        entry_created.disconnect(hold_the_claim, sender=Entry)

    # then
    assert waiting.status_code == 409
    assert waiting.json()["error"]["code"] == "in_progress"
    assert int(waiting["Retry-After"]) >= 1
    assert first["response"].status_code == 201
    retry = post(payload)
    assert retry.status_code == 200
    assert retry.json()["id"] == first["response"].json()["id"]
    assert counts()["entries"] == 1


@pytest.mark.postgres
def test_it_answers_not_committed_when_another_lock_is_held_too_long():
    # given: another session holds the entries table so no entry can be written
    locker = other_connection()
    locker.execute("BEGIN")
    locker.execute("LOCK TABLE board_entry IN EXCLUSIVE MODE")
    try:
        # when
        response = post(question())
    finally:
        locker.execute("ROLLBACK")
        locker.close()

    # then
    assert response.status_code == 503
    assert response.json()["error"]["outcome"] == "not_committed"
    assert counts()["entries"] == 0
    assert counts()["receipts"] == 0


@only_sqlite
def test_it_answers_not_committed_when_sqlite_stays_busy():
    # given: another connection holds SQLite's write lock past the busy timeout
    blocker = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        # when
        response = post(question())
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()

    # then
    assert response.status_code == 503
    assert response.json()["error"]["outcome"] == "not_committed"
    assert counts()["entries"] == 0
    assert counts()["receipts"] == 0
