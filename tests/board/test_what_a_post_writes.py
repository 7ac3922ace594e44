"""What a post writes besides its entry, and when: the counts of a refusal, the token's
last use, the overall counter's take and give-back, a replay that meets a delete, the
pages its indexes split.

Concurrency here is real: other transactions in other threads, real row locks."""

import json
import threading
import time

import pytest
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from board import services
from board.models import AgentToken, Entry, HourlyCounter
from receipts.models import Attempt, Receipt
from tests.conftest import (
    backend_waits_on_a_lock,
    counts,
    is_postgres,
    issue_agent,
    new_posts_held,
    question,
)


def post(client: Client, payload: dict):
    return client.post("/api/v1/entries", json.dumps(payload), content_type="application/json")


def post_in_thread(client: Client, payload: dict):
    try:
        return post(client, payload)
    finally:
        connection.close()  # each thread holds its own connection; leave none behind


@pytest.mark.django_db
def test_it_writes_nothing_but_the_count_for_a_refused_body():
    # given: an agent whose token was never used
    agent = issue_agent("careful-agent")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")

    # when: a body that fails the shape checks (step 1)
    response = client.post(
        "/api/v1/entries", json.dumps({"type": "question"}), content_type="application/json"
    )

    # then: 422, and the token's last use is not written; only the address's count is
    assert response.status_code == 422
    assert AgentToken.objects.get(principal__name="careful-agent").last_used_at is None
    assert list(HourlyCounter.objects.values_list("source", "count")) == [("ip:127.0.0.1", 1)]
    assert counts() == {"entries": 0, "receipts": 0, "tombstones": 0, "attempts": 0}


@pytest.mark.django_db
def test_it_records_the_tokens_use_after_a_saved_post():
    agent = issue_agent("busy-agent")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")

    response = client.post("/api/v1/entries", json.dumps(question()),
                           content_type="application/json")

    assert response.status_code == 201
    assert AgentToken.objects.get(principal__name="busy-agent").last_used_at is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_answers_deleted_when_a_delete_commits_while_the_replay_waits():
    # given: a saved post, and an operator's transaction that holds its receipt (as a
    # purge or a delete does) and then deletes the entry
    agent = issue_agent("replaying-agent")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    payload = question()
    first = client.post("/api/v1/entries", json.dumps(payload), content_type="application/json")
    entry_id = first.json()["id"]
    holding, go = threading.Event(), threading.Event()

    def operator_deletes():
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT id FROM receipts_receipt WHERE result_id = %s FOR UPDATE",
                        [entry_id],
                    )
                holding.set()
                go.wait(20)
                services.entry_delete(entry_id=entry_id)
        finally:
            connection.close()

    answers = {}
    operator = threading.Thread(target=operator_deletes)
    replay = threading.Thread(target=lambda: answers.update(replay=post_in_thread(client, payload)))

    # when: the retry arrives while the receipt is held, and the delete commits
    operator.start()
    assert holding.wait(10)
    replay.start()
    assert backend_waits_on_a_lock()
    go.set()
    operator.join(20)
    replay.join(20)

    # then: the retry answers with the receipt as the delete left it, never the blank entry
    assert answers["replay"].status_code == 410
    assert answers["replay"].json()["error"]["code"] == "deleted"
    assert Entry.objects.get(pk=entry_id).deleted_at is not None
    assert Receipt.objects.get().state == "deleted"
    assert counts()["entries"] == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_does_not_hold_the_overall_counter_across_an_entrys_commit(settings):
    # given: one agent's post is inside its transaction (entry written, not yet committed)
    settings.SETTLE_SOURCE_HOURLY_LIMIT = settings.SETTLE_OVERALL_HOURLY_LIMIT = 100
    slow, quick = issue_agent("slow-agent"), issue_agent("quick-agent")
    slow_client = Client(HTTP_AUTHORIZATION=f"Bearer {slow.token}")
    quick_client = Client(HTTP_AUTHORIZATION=f"Bearer {quick.token}")
    answers = {}
    worker = threading.Thread(
        target=lambda: answers.update(slow=post_in_thread(slow_client, question()))
    )
    with new_posts_held(thread=worker) as held:
        worker.start()
        assert held()

        # when: another agent posts meanwhile
        started = time.monotonic()
        quick_answer = post(quick_client, question())
        waited = time.monotonic() - started
    worker.join(20)

    # then: it is saved at once, not after the first commit (nor refused at the lock bound)
    assert quick_answer.status_code == 201
    assert waited < 3
    assert answers["slow"].status_code == 201
    assert counts()["entries"] == 2
    assert HourlyCounter.objects.get(source="*overall*").count == 2


@pytest.mark.django_db
def test_it_gives_the_overall_count_back_when_a_post_makes_no_entry(settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 100
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 2
    agent = issue_agent("retrying-agent")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    payload = question()
    assert post(client, payload).status_code == 201

    # when: retries, a conflict and a refused reply take nothing from the overall limit
    for _ in range(3):
        assert post(client, payload).status_code == 200
    assert post(client, {**payload, "body": "changed"}).status_code == 409
    orphan = question(type="reply", parent_id=999_999, title=None)
    assert post(client, orphan).status_code == 422

    # then: one more new post still fits, and the one after does not
    assert post(client, question()).status_code == 201
    assert post(client, question()).status_code == 429
    assert HourlyCounter.objects.get(source="*overall*").count == 2
    assert Attempt.objects.filter(outcome="replayed").count() == 3


@pytest.mark.django_db
def test_it_reads_an_mcp_callers_token_once_for_a_post(roomy_limits):
    # given: an agent calling post_entry over MCP
    agent = issue_agent("mcp-agent")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "post_entry", "arguments": question()}}

    # when
    with CaptureQueriesContext(connection) as captured:
        response = client.post(
            "/mcp", json.dumps(call), content_type="application/json",
            HTTP_ACCEPT="application/json", HTTP_MCP_PROTOCOL_VERSION="2025-06-18",
        )

    # then: one statement reads the token (the post's admission; the transport leaves
    # it to the post), and none writes it but the last-use touch
    assert response.json()["result"]["structuredContent"]["http_status"] == 201
    # (on PostgreSQL the admission reads it inside the function board_post_admit)
    reads = [q["sql"] for q in captured.captured_queries
             if ("board_agenttoken" in q["sql"] or "board_post_admit(" in q["sql"])
             and not q["sql"].lstrip().startswith("UPDATE")]
    assert len(reads) == 1, reads
    assert counts()["entries"] == 1


@pytest.mark.django_db
def test_the_type_and_actor_indexes_stay_packed_as_entries_arrive(agent, roomy_limits):
    if not is_postgres():
        pytest.skip("PostgreSQL's index pages and WAL")
    # given: two thousand entries after a real post, in the order posts write them, from
    # three agents taking turns
    template = Entry.objects.get(pk=agent.post(question()).json()["id"])
    Entry.objects.bulk_create([
        Entry(type="question", title=f"Question {n}", body="body", actor_name=f"agent-{n % 3}",
              submission_mode="autonomous", route="api", source=template.source,
              principal=template.principal, created_at=timezone.now())
        for n in range(2000)
    ], batch_size=500)

    # when: they arrive, one by one in the order of their ids, into a table with the
    # entries' own indexes (a copy: the test database's own indexes keep the pages of
    # rows earlier tests wrote and deleted)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign keys checked first
        cursor.execute("CREATE TEMP TABLE entry_copy (LIKE board_entry INCLUDING INDEXES)")
        cursor.execute("INSERT INTO entry_copy SELECT * FROM board_entry ORDER BY id")

        # then: each index is about as small as built afresh from the same rows; an index
        # whose new entries went first in their leaf split its pages in half, twice the
        # size, having written half a page to the WAL at each split
        for name, definition in (("entry_question_newest", "(id) WHERE type = 'question'"),
                                 ("entry_actor_newest", "(actor_name, id)")):
            cursor.execute(
                # the copy's index with the same definition (after `USING`) as `name`
                "SELECT copy.relname FROM pg_index i JOIN pg_class copy ON copy.oid = i.indexrelid"
                " WHERE i.indrelid = 'entry_copy'::regclass"
                " AND regexp_replace(pg_get_indexdef(copy.oid), '^.* USING ', '')"
                " = regexp_replace(pg_get_indexdef(%s::regclass), '^.* USING ', '')",
                [name],
            )
            (copied,), = cursor.fetchall()
            cursor.execute(f"CREATE INDEX entry_fresh ON entry_copy {definition}")
            cursor.execute("SELECT pg_relation_size(%s), pg_relation_size('entry_fresh')",
                           [copied])
            live, fresh = cursor.fetchone()
            cursor.execute("DROP INDEX entry_fresh")
            assert live <= fresh * 1.3, (name, live, fresh)
