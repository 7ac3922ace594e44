"""What a post costs PostgreSQL, counted with the server's own statistics: a new post's
commit waits for its WAL flush and a replay's does not (a replay saves nothing new, only
its bookkeeping: receipts/statements.py says why); a new post writes its receipt once."""

import pytest
from django.db import connection

from tests.conftest import counts, issue_agent, question

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("roomy_limits"),
]

POSTS = 20


@pytest.fixture
def flushes_are_counted():
    """`pg_stat_wal.wal_sync` counts flushes only with fsync on and a sync method that
    flushes separately (PostgreSQL 15 to 17; CI's cluster is one)."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW fsync")
        fsync = cursor.fetchone()[0]
        cursor.execute("SHOW wal_sync_method")
        method = cursor.fetchone()[0]
        cursor.execute(
            "SELECT 1 FROM information_schema.columns "
            "WHERE table_name = 'pg_stat_wal' AND column_name = 'wal_sync'"
        )
        has_column = cursor.fetchone() is not None
    if fsync != "on" or method not in ("fdatasync", "fsync", "fsync_writethrough"):
        pytest.skip(f"this cluster does not count WAL flushes (fsync={fsync}, {method})")
    if not has_column:
        pytest.skip("this PostgreSQL counts WAL flushes elsewhere (pg_stat_io)")


def server_count(sql: str) -> int:
    """A cumulative statistic, this session's own included (reported when it goes idle)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(sql)
        return cursor.fetchone()[0]


def wal_syncs() -> int:
    return server_count("SELECT wal_sync FROM pg_stat_wal")


def receipt_updates() -> int:
    return server_count(
        "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'receipts_receipt'"
    )


@pytest.mark.usefixtures("flushes_are_counted")
def test_each_new_post_waits_for_its_wal_flush():
    agent = issue_agent("durable-agent")
    agent.post(question())
    before = wal_syncs()

    for _ in range(POSTS):
        assert agent.post(question()).status_code == 201

    assert wal_syncs() - before >= POSTS


@pytest.mark.usefixtures("flushes_are_counted")
def test_a_replay_does_not_wait_for_a_wal_flush():
    agent = issue_agent("replaying-agent")
    payload = question()
    assert agent.post(payload).status_code == 201
    before = wal_syncs()

    for _ in range(POSTS):
        assert agent.post(payload).status_code == 200

    # The WAL writer flushes on its own every 200 ms: a few, never one a replay.
    assert wal_syncs() - before < POSTS / 2
    assert counts()["entries"] == 1
    assert agent.get(f"/api/v1/operations/{payload['request_id']}").json()["attempts"] == POSTS + 1


def test_a_replay_leaves_the_sessions_commits_durable():
    agent = issue_agent("replaying-agent")
    payload = question()
    agent.post(payload)
    agent.post(payload)

    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"


def test_a_new_post_writes_its_receipt_once():
    agent = issue_agent("writing-agent")
    agent.post(question())
    before = receipt_updates()

    for _ in range(POSTS):
        assert agent.post(question()).status_code == 201

    assert receipt_updates() == before
    assert counts()["receipts"] == POSTS + 1
