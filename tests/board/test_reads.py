"""Public reads and the operation lookup (SPEC 5.2)."""

import uuid
from datetime import timedelta

import jsonschema
import pytest
import time_machine
from django.utils import timezone

from board.models import Entry
from moderation import actions as moderation
from tests.conftest import counts, question, reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("roomy_limits")]


def test_it_makes_a_version_4_request_id_without_writing(anonymous):
    response = anonymous.client.post("/api/v1/request-ids")

    assert response.status_code == 201
    assert uuid.UUID(response.json()["request_id"]).version == 4
    assert counts() == {"entries": 0, "receipts": 0, "tombstones": 0, "attempts": 0}


def test_it_looks_an_operation_up_without_spending_an_attempt(agent):
    payload = question()
    entry = agent.post(payload).json()
    before = counts()

    response = agent.get(f"/api/v1/operations/{payload['request_id']}")

    assert response.status_code == 200
    operation = response.json()
    assert operation["status"] == "succeeded"
    assert operation["operation"] == "post_entry:v1"
    assert operation["first_route"] == "api"
    assert operation["attempts"] == 1
    assert operation["result"]["id"] == entry["id"]
    assert operation["receipt_expires_at"] == entry["receipt_expires_at"]
    assert counts() == before


def test_it_counts_attempts_that_reached_the_receipt(agent):
    payload = question()
    agent.post(payload)
    agent.post(payload)
    agent.post({**payload, "body": "changed"})

    operation = agent.get(f"/api/v1/operations/{payload['request_id']}").json()

    assert operation["attempts"] == 3


def test_it_answers_404_for_an_unknown_operation(agent):
    response = agent.get(f"/api/v1/operations/{uuid.uuid4()}")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_it_reports_a_deleted_operation(agent):
    payload = question()
    entry = agent.post(payload).json()
    moderation.entry_delete(actor="test", entry_id=entry["id"], reason="abuse")

    operation = agent.get(f"/api/v1/operations/{payload['request_id']}").json()

    assert operation["status"] == "deleted"
    assert operation["result"] is None


def test_it_keeps_the_promised_expiry_of_a_deleted_operation(agent):
    # SPEC 8.1: receipt_expires_at is computed once, at the write, and never moved; the
    # deletion record's own life runs from its deleted_at.
    payload = question()
    entry = agent.post(payload).json()
    with time_machine.travel(timezone.now() + timedelta(days=3), tick=False):
        moderation.entry_delete(actor="test", entry_id=entry["id"], reason="abuse")

    operation = agent.get(f"/api/v1/operations/{payload['request_id']}").json()

    assert operation["status"] == "deleted"
    assert operation["receipt_expires_at"] == entry["receipt_expires_at"]


def test_it_reports_expired_from_receipt_expires_at_on(agent, settings):
    payload = question()
    entry = agent.post(payload).json()
    later = timezone.now() + settings.SETTLE_ENTRY_RETENTION + timedelta(seconds=1)

    with time_machine.travel(later, tick=False):
        operation = agent.get(f"/api/v1/operations/{payload['request_id']}").json()
        retry = agent.post(payload)

    assert operation["status"] == "expired"
    assert operation["result"] is None
    assert retry.status_code == 410
    assert retry.json()["error"]["code"] == "expired"
    # the retry made nothing: the one entry is still the first post's
    assert list(Entry.objects.values_list("id", flat=True)) == [entry["id"]]
    assert counts()["receipts"] == 1


def test_it_lists_threads_newest_first_with_stable_cursors(anonymous):
    ids = [anonymous.post(question(title=f"Q{i}")).json()["id"] for i in range(5)]

    first = anonymous.get("/api/v1/threads?limit=2").json()
    anonymous.post(question(title="Arrives between pages"))
    second = anonymous.get(f"/api/v1/threads?limit=2&cursor={first['next_cursor']}").json()
    third = anonymous.get(f"/api/v1/threads?limit=2&cursor={second['next_cursor']}").json()

    seen = [item["id"] for page in (first, second, third) for item in page["items"]]
    assert seen == list(reversed(ids))
    assert third["next_cursor"] is None
    assert "request_id" not in first["items"][0]
    assert "receipt_expires_at" not in first["items"][0]


def test_it_lists_replies_oldest_first_and_leaves_out_hidden_and_deleted(anonymous):
    thread = anonymous.post(question()).json()
    replies = [anonymous.post(reply(thread["id"], body=f"R{i}")).json()["id"] for i in range(4)]
    moderation.entry_hide(actor="test", entry_id=replies[1], reason="off topic")
    moderation.entry_delete(actor="test", entry_id=replies[2], reason="abuse")

    page = anonymous.get(f"/api/v1/threads/{thread['id']}/replies?limit=1").json()
    rest = anonymous.get(
        f"/api/v1/threads/{thread['id']}/replies?cursor={page['next_cursor']}"
    ).json()

    assert [r["id"] for r in page["items"] + rest["items"]] == [replies[0], replies[3]]
    detail = anonymous.get(f"/api/v1/threads/{thread['id']}").json()
    assert detail["reply_count"] == 2


def test_it_takes_a_hidden_questions_thread_out_of_public_reads(anonymous):
    thread = anonymous.post(question()).json()
    anonymous.post(reply(thread["id"]))
    moderation.entry_hide(actor="test", entry_id=thread["id"], reason="spam")

    assert anonymous.get("/api/v1/threads").json()["items"] == []
    assert anonymous.get(f"/api/v1/threads/{thread['id']}").status_code == 404
    assert anonymous.get(f"/api/v1/threads/{thread['id']}/replies").status_code == 404
    assert anonymous.client.get(f"/threads/{thread['id']}").status_code == 404


def test_it_answers_404_for_a_reply_asked_for_as_a_thread(anonymous):
    thread = anonymous.post(question()).json()
    child = anonymous.post(reply(thread["id"])).json()

    assert anonymous.get(f"/api/v1/threads/{child['id']}").status_code == 404


def test_it_serves_the_public_page_every_url_points_to(anonymous):
    thread = anonymous.post(question(title="A page title")).json()
    child = anonymous.post(reply(thread["id"], body="A visible reply")).json()

    page = anonymous.client.get(child["url"].removeprefix("http://testserver"))

    assert page.status_code == 200
    assert b"A page title" in page.content
    assert f'id="reply-{child["id"]}"'.encode() in page.content
    assert b"A page title" in anonymous.client.get("/threads/").content


def test_it_leaves_a_hidden_reply_off_the_public_page(anonymous):
    thread = anonymous.post(question()).json()
    child = anonymous.post(reply(thread["id"], body="Hidden but kept")).json()
    moderation.entry_hide(actor="test", entry_id=child["id"], reason="off topic")

    page = anonymous.client.get(f"/threads/{thread['id']}")

    assert page.status_code == 200
    assert b"Hidden but kept" not in page.content


def test_it_builds_urls_on_the_public_url_when_set(anonymous, settings):
    settings.SETTLE_PUBLIC_URL = "https://settle.example"

    entry = anonymous.post(question()).json()

    assert entry["url"] == f"https://settle.example/threads/{entry['id']}"


def test_it_serves_the_openapi_docs(anonymous):
    assert anonymous.client.get("/api/v1/docs").status_code == 200
    schema = anonymous.client.get("/api/v1/openapi.json").json()
    assert "/api/v1/entries" in schema["paths"]


def test_it_documents_the_answers_it_gives(agent):
    operations = agent.get("/api/v1/openapi.json").json()["paths"]
    post = operations["/api/v1/entries"]["post"]["responses"]
    payload = question()
    created = agent.post(payload)
    replayed = agent.post(payload)
    conflict = agent.post({**payload, "body": "changed"})

    for response in (created, replayed, conflict):
        documented = post[str(response.status_code)]["content"]["application/json"]["schema"]
        jsonschema.validate(response.json(), documented)
    assert set(post) >= {"200", "201", "400", "401", "409", "410", "422", "429", "503"}
