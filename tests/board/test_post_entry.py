"""POST /api/v1/entries: a write, its replay, and its conflict."""

import uuid

import pytest
from django.utils import timezone

from board.services import POST_ENTRY
from receipts.selectors import request_trace
from tests.conftest import counts, new_request_id, question, reply

pytestmark = pytest.mark.django_db


def test_it_creates_a_question_with_its_receipt(agent):
    # given
    payload = question()

    # when
    response = agent.post(payload)

    # then
    assert response.status_code == 201
    entry = response.json()
    assert entry["replayed"] is False
    assert entry["route"] == "api"
    assert entry["request_id"] == payload["request_id"]
    assert entry["title"] == payload["title"]
    assert entry["url"] == f"http://testserver/threads/{entry['id']}"
    assert entry["bookmark_url"] is None
    assert response["Location"] == f"/api/v1/operations/{payload['request_id']}"
    assert set(entry) == {
        "id", "type", "parent_id", "title", "body", "actor", "submission_mode", "created_at",
        "visible", "url", "bookmark_url", "request_id", "replayed", "route",
        "receipt_expires_at",
    }
    # and: the attempt is logged by its receipt (route and time), as the operators'
    # trace shows it; the attempt log holds no row of its own for it
    assert counts() == {"entries": 1, "receipts": 1, "tombstones": 0, "attempts": 0}
    (trace,) = request_trace(
        request_id=uuid.UUID(payload["request_id"]), operation=POST_ENTRY, scopes=[],
        now=timezone.now(),
    )
    assert [(a.outcome, a.route) for a in trace.attempts] == [("created", "api")]


def test_it_replays_a_retry_with_the_same_entry(agent):
    payload = question()
    first = agent.post(payload).json()

    response = agent.post(payload)

    assert response.status_code == 200
    assert response["Idempotent-Replayed"] == "true"
    assert response.json() == {**first, "replayed": True}
    assert counts()["entries"] == 1
    assert counts()["receipts"] == 1


def test_it_refuses_different_content_under_the_same_request_id(agent):
    payload = question()
    first = agent.post(payload).json()

    response = agent.post(
        {**payload, "body": "Something else", "submission_mode": "human"}
    )

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "conflict"
    assert error["conflicting_fields"] == ["body", "submission_mode"]
    assert error["existing_id"] == first["id"]
    assert counts()["entries"] == 1


def test_it_names_actor_as_one_conflicting_field(agent):
    payload = question()
    agent.post(payload)

    response = agent.post({**payload, "actor": {**payload["actor"], "trigger": "other"}})

    assert response.json()["error"]["conflicting_fields"] == ["actor"]


def test_it_posts_a_reply_with_a_bookmark_that_opens_on_it(agent):
    parent = agent.post(question()).json()
    for _ in range(3):
        agent.post(reply(parent["id"]))

    response = agent.post(reply(parent["id"], body="The one to bookmark"))

    assert response.status_code == 201
    entry = response.json()
    assert entry["url"] == f"http://testserver/threads/{parent['id']}#reply-{entry['id']}"
    page = agent.get(entry["bookmark_url"].removeprefix("http://testserver")).json()
    assert page["items"][0]["id"] == entry["id"]


def test_it_takes_the_request_id_from_the_idempotency_key_header(agent):
    payload = question()
    key = payload.pop("request_id")

    created = agent.post(payload, HTTP_IDEMPOTENCY_KEY=key)
    replayed = agent.post(payload, HTTP_IDEMPOTENCY_KEY=f'"{key}"')

    assert created.status_code == 201
    assert created.json()["request_id"] == key
    assert replayed.status_code == 200
    assert counts()["entries"] == 1


def test_it_refuses_a_header_key_that_disagrees_with_the_body(agent):
    response = agent.post(question(), HTTP_IDEMPOTENCY_KEY=new_request_id())

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"
    assert counts()["receipts"] == 0


def test_it_echoes_the_request_id_in_lowercase(agent):
    request_id = new_request_id()

    response = agent.post(question(request_id=request_id.upper()))

    assert response.json()["request_id"] == request_id
    assert agent.post(question(request_id=request_id)).status_code == 200


def test_it_accepts_a_version_7_request_id(agent):
    # A v7 UUID: 48-bit timestamp, version nibble 7, RFC 4122 variant.
    v7 = uuid.UUID(int=(0x0190_0000_0000 << 80) | (7 << 76) | (0b10 << 62) | 12345)

    response = agent.post(question(request_id=str(v7)))

    assert response.status_code == 201


@pytest.mark.parametrize("blank", [None, "", "absent"])
def test_it_treats_absent_null_and_empty_model_and_trigger_as_one(agent, blank):
    payload = question(actor={"name": "bot", "model": "", "trigger": ""})
    agent.post(payload)
    actor = {"name": "bot"}
    if blank != "absent":
        actor |= {"model": blank, "trigger": blank}

    response = agent.post({**payload, "actor": actor})

    assert response.status_code == 200
    assert response.json()["actor"] == {"name": "bot", "model": "", "trigger": ""}
