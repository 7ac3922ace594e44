"""Transient faults answer 503 with a truthful `outcome`, and a retry settles them.

Each fault is real: a backend killed from another connection, a lock held by another
transaction, a commit whose acknowledgement is lost after the commit happened.
"""

import sqlite3
import threading
from contextlib import contextmanager

import psycopg
import pytest
from django.db import OperationalError, connection
from django.test import Client

from moderation import actions as moderation
from tests.board.mcp_support import modern_call
from tests.conftest import counts, new_posts_held, other_connection, question

pytestmark = pytest.mark.django_db(transaction=True)

only_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's busy lock")


def post(payload: dict):
    response = Client().post("/api/v1/entries", payload, content_type="application/json")
    connection.close_if_unusable_or_obsolete()
    return response


@pytest.mark.postgres
def test_it_answers_unknown_when_the_connection_dies_inside_the_write_and_a_retry_settles():
    # given: the post's write has claimed and written its entry, and waits (inside its
    # transaction) to write a companion's rows, when its backend is killed. Its COMMIT
    # was sent with its statements (one round trip), so the server cannot tell.
    killer = other_connection()
    payload, answers = question(), {}
    with new_posts_held() as held:
        writer = threading.Thread(target=lambda: answers.update(response=post(payload)))
        writer.start()
        pid = held()
        assert pid

        # when: pg_terminate_backend, with a timeout, returns once the backend is gone
        killer.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
        writer.join(20)
    killer.close()
    retry = post(payload)

    # then: nothing was saved, though the answer may not claim it; the retry makes it
    response = answers["response"]
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "unavailable"
    assert error["outcome"] == "unknown"
    assert response["Retry-After"]
    assert retry.status_code == 201
    assert counts()["entries"] == 1
    assert counts()["receipts"] == 1


def test_it_answers_unknown_when_the_commit_is_lost_and_the_retry_replays(monkeypatch):
    # given: COMMIT reaches the database, but its acknowledgement never comes back
    lost = []

    def lose_the_answer_once():
        if not lost:
            lost.append(True)
            raise OperationalError("server closed the connection unexpectedly")

    if connection.vendor == "postgresql":
        # The write commits at its pipeline's Sync (receipts/engines/postgresql.py `write`).
        real_pipeline = psycopg.Connection.pipeline

        @contextmanager
        def pipeline_then_lose_the_answer(self):
            with real_pipeline(self) as pipeline:
                yield pipeline
            lose_the_answer_once()

        monkeypatch.setattr(psycopg.Connection, "pipeline", pipeline_then_lose_the_answer)
    else:
        real_commit = connection._commit

        def commit_then_lose_the_answer():
            real_commit()
            lose_the_answer_once()

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
    first = {}
    with new_posts_held() as held:
        worker = threading.Thread(target=lambda: first.update(response=post(payload)))
        worker.start()
        assert held()

        # when
        waiting = post(payload)
    worker.join()

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


@only_sqlite
def test_it_answers_a_post_over_mcp_not_committed_when_sqlite_stays_busy():
    # given: another connection holds SQLite's write lock past the busy timeout, and an
    # agent posts over MCP (whose token the post's own admission reads)
    _, token = moderation.token_issue(actor="operator", name="mcp-busy")
    blocker = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        # when
        response = modern_call(Client(), "post_entry", question(), token=token)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()

    # then: the post's own truthful answer, as over HTTP
    assert response.status_code == 200
    structured = response.json()["result"]["structuredContent"]
    assert structured["http_status"] == 503
    assert structured["data"]["error"]["outcome"] == "not_committed"
    assert counts()["entries"] == 0
    assert counts()["receipts"] == 0
