"""One request, whichever route carries it: HTTP and MCP share receipts, and identical
MCP calls racing each other save one entry."""

import json
import threading
import urllib.request

import pytest

from board.models import Entry
from receipts.models import Receipt
from tests.board.mcp_support import META, MODERN, tool_result
from tests.conftest import counts, question


def test_it_replays_over_mcp_a_post_first_sent_over_http(agent, roomy_limits):
    # given
    payload = question()
    first = agent.post(payload)
    assert first.status_code == 201

    # when
    structured = tool_result(agent.client, "post_entry", payload, token=agent.token)[
        "structuredContent"
    ]

    # then
    assert structured["http_status"] == 200
    assert structured["data"]["replayed"] is True
    assert structured["data"]["id"] == first.json()["id"]
    assert structured["data"]["route"] == "api"
    assert counts()["entries"] == counts()["receipts"] == 1
    assert Entry.objects.get().route == "api"
    operation = tool_result(
        agent.client, "get_operation", {"request_id": payload["request_id"]}, token=agent.token
    )["structuredContent"]["data"]
    assert operation["first_route"] == "api"
    assert operation["attempts"] == 2


def test_it_replays_over_http_a_post_first_sent_over_mcp(agent, roomy_limits):
    # given
    payload = question()
    first = tool_result(agent.client, "post_entry", payload, token=agent.token)
    assert first["structuredContent"]["http_status"] == 201

    # when
    again = agent.post(payload)

    # then
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first["structuredContent"]["data"]["id"]
    assert again.json()["route"] == "mcp"
    assert counts()["entries"] == counts()["receipts"] == 1
    assert Receipt.objects.get().first_route == "mcp"
    assert agent.get(f"/api/v1/operations/{payload['request_id']}").json()["first_route"] == "mcp"


def test_it_keeps_scopes_apart_across_routes(agent, other_agent, roomy_limits):
    payload = question()
    assert agent.post(payload).status_code == 201
    structured = tool_result(other_agent.client, "post_entry", payload, token=other_agent.token)[
        "structuredContent"
    ]
    assert structured["http_status"] == 201
    assert counts()["entries"] == 2


# PostgreSQL is where this race is real (row locks, concurrent transactions); on SQLite
# the writers serialize on BEGIN IMMEDIATE. It must hold on both.
@pytest.mark.django_db(transaction=True)
def test_it_saves_one_entry_for_sixteen_identical_concurrent_calls(
    live_server, agent, roomy_limits
):
    # given
    payload = question()
    body = json.dumps({
        "jsonrpc": "2.0", "id": 0, "method": "tools/call",
        "params": {"name": "post_entry", "arguments": payload, "_meta": META},
    }).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {agent.token}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "post_entry",
    }
    start = threading.Barrier(16)
    answers: list = []

    def call() -> None:
        request = urllib.request.Request(
            live_server.url + "/mcp", data=body, headers=headers, method="POST"
        )
        start.wait()
        with urllib.request.urlopen(request, timeout=30) as response:
            answers.append(json.loads(response.read())["result"]["structuredContent"])

    # when
    threads = [threading.Thread(target=call) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # then
    assert len(answers) == 16
    statuses = sorted(answer["http_status"] for answer in answers)
    assert statuses == [200] * 15 + [201]
    assert len({answer["data"]["id"] for answer in answers}) == 1
    assert counts()["entries"] == counts()["receipts"] == 1
    assert Receipt.objects.get().attempts == 16
