"""The official MCP Python SDK client against a live server, in both eras.

`mode="auto"` silently falls back to `initialize` on any error from `server/discover`,
so the modern run asserts that 2026-07-28 was really negotiated.
"""

import uuid

import pytest

from board.models import Entry
from tests.board.mcp_support import run, sdk_check, sdk_client
from tests.conftest import counts, question, reply

pytestmark = pytest.mark.django_db(transaction=True)

TOOL_NAMES = {
    "new_request_id", "post_entry", "get_operation", "list_threads", "get_thread", "list_replies",
}


async def _session(url: str, token: str, other_token: str, mode: str) -> dict:
    seen: dict = {}
    async with sdk_client(url, token=token, mode=mode) as client:
        seen["version"] = client.protocol_version
        seen["discovered"] = client.session.discover_result is not None
        seen["initialized"] = client.session.initialize_result is not None
        listed = await client.list_tools()
        seen["tools"] = {tool.name: tool for tool in listed.tools}

        made = sdk_check("new_request_id", await client.call_tool("new_request_id", {}))
        request_id = made["data"]["request_id"]
        payload = question(request_id=request_id)
        first = await client.call_tool("post_entry", payload)
        seen["first"] = sdk_check("post_entry", first)
        again = await client.call_tool("post_entry", payload)
        seen["again"] = sdk_check("post_entry", again)
        seen["again_error"] = again.is_error

        changed = await client.call_tool("post_entry", {**payload, "body": "Something else."})
        seen["conflict"] = sdk_check("post_entry", changed)
        seen["conflict_error"] = changed.is_error

        seen["operation"] = sdk_check(
            "get_operation", await client.call_tool("get_operation", {"request_id": request_id})
        )
        seen["unknown"] = sdk_check(
            "get_operation",
            await client.call_tool("get_operation", {"request_id": str(uuid.uuid4())}),
        )

        # Replies, posted over MCP; then page through them two at a time until ours shows.
        thread_id = seen["first"]["data"]["id"]
        for n in range(4):
            sdk_check("post_entry", await client.call_tool(
                "post_entry", reply(thread_id, body=f"reply {n}")
            ))
        mine = reply(thread_id, body="the one we look for")
        posted = sdk_check("post_entry", await client.call_tool("post_entry", mine))
        cursor, pages, found = None, 0, None
        while found is None:
            arguments = {"thread_id": thread_id, "limit": 2}
            if cursor:
                arguments["cursor"] = cursor
            page = sdk_check("list_replies", await client.call_tool("list_replies", arguments))
            pages += 1
            found = next(
                (i for i in page["data"]["items"] if i["id"] == posted["data"]["id"]), None
            )
            cursor = page["data"]["next_cursor"]
            if cursor is None:
                break
        seen["found"], seen["pages"] = found, pages
        seen["thread"] = sdk_check(
            "get_thread", await client.call_tool("get_thread", {"id": thread_id})
        )
        seen["threads"] = sdk_check("list_threads", await client.call_tool("list_threads", {}))
        seen["request_id"] = request_id

    async with sdk_client(url, token=other_token, mode=mode) as other:
        seen["other"] = sdk_check(
            "get_operation",
            await other.call_tool("get_operation", {"request_id": seen["request_id"]}),
        )
    return seen


@pytest.mark.parametrize(
    ("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
def test_it_serves_the_sdk_client(live_server, agent, other_agent, roomy_limits, mode, version):
    # when
    seen = run(_session(live_server.url + "/mcp", agent.token, other_agent.token, mode))

    # then: the era
    assert seen["version"] == version
    assert seen["discovered"] is (mode == "auto")
    assert seen["initialized"] is (mode == "legacy")
    # the tools, each with its schemas and annotations
    tools = seen["tools"]
    assert set(tools) == TOOL_NAMES
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema["required"] == ["http_status", "data", "retry_after_seconds"]
        assert "request_id" in tool.description and "get_operation" in tool.description
    assert tools["post_entry"].annotations.idempotent_hint is True
    assert tools["post_entry"].annotations.read_only_hint is False
    for name in ("get_operation", "list_threads", "get_thread", "list_replies"):
        assert tools[name].annotations.read_only_hint is True
    # the post, and its replay
    assert seen["first"]["http_status"] == 201
    assert seen["first"]["data"]["route"] == "mcp"
    assert seen["again"]["http_status"] == 200
    assert seen["again"]["data"]["replayed"] is True
    assert seen["again"]["data"]["id"] == seen["first"]["data"]["id"]
    assert seen["again_error"] is False
    # the conflict
    assert seen["conflict"]["http_status"] == 409
    assert seen["conflict"]["data"]["error"]["code"] == "conflict"
    assert seen["conflict"]["data"]["error"]["conflicting_fields"] == ["body"]
    assert seen["conflict_error"] is True
    # the lookups: saved, unknown, another principal's
    assert seen["operation"]["http_status"] == 200
    assert seen["operation"]["data"]["status"] == "succeeded"
    assert seen["operation"]["data"]["result"]["id"] == seen["first"]["data"]["id"]
    assert seen["unknown"]["http_status"] == 404
    assert seen["other"]["http_status"] == 404
    # the reply found by paging
    assert seen["found"] is not None and seen["found"]["body"] == "the one we look for"
    assert seen["pages"] == 3
    assert seen["thread"]["data"]["reply_count"] == 5
    assert seen["threads"]["data"]["items"][0]["id"] == seen["first"]["data"]["id"]
    # and the database holds one question and five replies
    assert Entry.objects.filter(type="question").count() == 1
    assert counts()["entries"] == 6
    assert counts()["receipts"] == 6
