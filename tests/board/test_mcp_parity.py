"""Every outcome of SPEC 5.1, answered over MCP exactly as over HTTP.

For each situation the same agent sends the same call on both routes; the tool's
`structuredContent` must hold the HTTP status and body. Time is frozen so timestamps and
Retry-After values agree.
"""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.conf import settings

from moderation import actions as moderation
from tests.board.mcp_support import tool_result
from tests.conftest import counts, question

NOW = datetime(2026, 11, 30, 3, 20, 15, tzinfo=UTC)
SET_ASIDE_FOR_201 = {"id", "created_at", "url", "bookmark_url", "route", "request_id"}


def _http(agent, payload):
    response = agent.post(payload)
    return response.status_code, response.json(), response.headers.get("Retry-After")


def _mcp(agent, payload):
    structured = tool_result(agent.client, "post_entry", payload, token=agent.token)[
        "structuredContent"
    ]
    return structured["http_status"], structured["data"], structured["retry_after_seconds"]


def _created(agent, settings):
    return None, question(), question()


def _replayed(agent, settings):
    payload = question()
    assert agent.post(payload).status_code == 201
    return None, payload, payload


def _conflict(agent, settings):
    payload = question()
    assert agent.post(payload).status_code == 201
    changed = {**payload, "body": "Another body.", "submission_mode": "human"}
    return None, changed, changed


def _deleted(agent, settings):
    payload = question()
    entry_id = agent.post(payload).json()["id"]
    moderation.entry_delete(actor="operator", entry_id=entry_id, reason="spam")
    return None, payload, payload


def _expired(agent, settings):
    payload = question()
    assert agent.post(payload).status_code == 201
    return settings.SETTLE_ENTRY_RETENTION + timedelta(seconds=1), payload, payload


def _invalid(agent, settings):
    payload = question(title="   ", unknown="x", actor={"name": "bot", "colour": "red"})
    return None, payload, payload


def _rate_limited(agent, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 0
    return None, question(), question()


def _paused(agent, settings):
    moderation.posting_pause(actor="operator", reason="maintenance until 04:00")
    payload = question()
    return None, payload, payload


@pytest.mark.parametrize(
    ("situation", "status", "code"),
    [
        (_created, 201, None),
        (_replayed, 200, None),
        (_conflict, 409, "conflict"),
        (_deleted, 410, "deleted"),
        (_expired, 410, "expired"),
        (_invalid, 422, "invalid_request"),
        (_rate_limited, 429, "rate_limited"),
        (_paused, 503, "writes_disabled"),
    ],
    ids=["201", "200", "409-conflict", "410-deleted", "410-expired", "422", "429", "503"],
)
def test_it_answers_like_http(agent, roomy_limits, settings, situation, status, code):
    with time_machine.travel(NOW, tick=False) as clock:
        # given
        later, http_payload, mcp_payload = situation(agent, settings)
        if later:
            clock.shift(later)
        before = counts()

        # when
        http_status, http_body, http_retry_after = _http(agent, http_payload)
        mcp_status, mcp_body, retry_after = _mcp(agent, mcp_payload)

    # then
    assert http_status == mcp_status == status
    if status == 201:
        assert {k: v for k, v in http_body.items() if k not in SET_ASIDE_FOR_201} == {
            k: v for k, v in mcp_body.items() if k not in SET_ASIDE_FOR_201
        }
        assert (http_body["route"], mcp_body["route"]) == ("api", "mcp")
        assert http_body["request_id"] == http_payload["request_id"]
        assert mcp_body["request_id"] == mcp_payload["request_id"]
        assert counts()["entries"] == before["entries"] + 2
    else:
        assert mcp_body == http_body
        assert counts()["entries"] == before["entries"]
        assert counts()["receipts"] == before["receipts"]
    if code:
        assert mcp_body["error"]["code"] == code
    # the wait MCP reports is the one HTTP sends in its Retry-After header
    if status in (429, 503):
        assert retry_after == int(http_retry_after) > 0
    else:
        assert (retry_after, http_retry_after) == (None, None)


def test_it_reads_like_http(agent, other_agent, roomy_limits):
    # given: a thread with a reply, and one lookup of each kind
    with time_machine.travel(NOW, tick=False):
        posted = agent.post(question()).json()
        agent.post(
            {**question(), "type": "reply", "parent_id": posted["id"], "title": None}
        )
        calls = [
            ("get_operation", {"request_id": posted["request_id"]},
             f"/api/v1/operations/{posted['request_id']}"),
            ("get_operation", {"request_id": "not-a-uuid"}, "/api/v1/operations/not-a-uuid"),
            ("list_threads", {"limit": 1}, "/api/v1/threads?limit=1"),
            ("list_threads", {"limit": 101}, "/api/v1/threads?limit=101"),
            ("list_threads", {"cursor": "bogus"}, "/api/v1/threads?cursor=bogus"),
            ("get_thread", {"id": posted["id"]}, f"/api/v1/threads/{posted['id']}"),
            ("get_thread", {"id": 999_999}, "/api/v1/threads/999999"),
            ("list_replies", {"thread_id": posted["id"]},
             f"/api/v1/threads/{posted['id']}/replies"),
            ("list_replies", {"thread_id": 999_999}, "/api/v1/threads/999999/replies"),
        ]
        for name, arguments, path in calls:
            # when
            http = agent.get(path)
            structured = tool_result(agent.client, name, arguments, token=agent.token)[
                "structuredContent"
            ]
            # then
            assert (structured["http_status"], structured["data"]) == (
                http.status_code, http.json()
            ), name

    # another principal does not see the agent's operation, on either route
    other = tool_result(
        other_agent.client, "get_operation", {"request_id": posted["request_id"]},
        token=other_agent.token,
    )["structuredContent"]
    assert other["http_status"] == 404
    assert other_agent.get(f"/api/v1/operations/{posted['request_id']}").status_code == 404


def test_it_makes_request_ids_like_http(agent):
    http = agent.client.post("/api/v1/request-ids", HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    structured = tool_result(agent.client, "new_request_id", {}, token=agent.token)[
        "structuredContent"
    ]
    assert http.status_code == structured["http_status"] == 201
    assert set(http.json()) == set(structured["data"]) == {"request_id"}
    assert counts()["receipts"] == 0


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("get_thread", {}, "id"),
        ("get_thread", {"id": "7"}, "id"),
        ("get_thread", {"id": True}, "id"),
        ("list_replies", {"thread_id": 1, "limit": "ten"}, "limit"),
        ("list_threads", {"cursor": 5}, "cursor"),
        ("list_threads", {"colour": "red"}, "colour"),
        ("new_request_id", {"n": 1}, "n"),
        ("get_operation", {}, "request_id"),
        ("get_operation", {"request_id": 42}, "request_id"),
        ("post_entry", {}, "request_id"),
    ],
)
def test_it_answers_an_argument_error_with_a_422_result(agent, name, arguments, field):
    before = counts()
    result = tool_result(agent.client, name, arguments, token=agent.token)
    structured = result["structuredContent"]
    assert result["isError"] is True
    assert structured["http_status"] == 422
    assert structured["data"]["error"]["code"] == "invalid_request"
    assert field in [f["field"] for f in structured["data"]["error"]["fields"]]
    assert counts()["entries"] == before["entries"]
    assert counts()["receipts"] == before["receipts"]


def test_it_checks_post_entry_arguments_like_an_http_body(agent, roomy_limits):
    deep: dict = {}
    node = deep
    for _ in range(settings.SETTLE_MAX_JSON_DEPTH + 1):
        node["x"] = {}
        node = node["x"]
    payload = question(actor=deep)
    http = agent.post(payload)
    structured = tool_result(agent.client, "post_entry", payload, token=agent.token)[
        "structuredContent"
    ]
    assert (structured["http_status"], structured["data"]) == (400, http.json())
    assert counts()["receipts"] == 0
