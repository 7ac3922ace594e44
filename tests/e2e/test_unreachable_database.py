"""A database that cannot be reached: every call answers 503 in the error shape, a post
says truthfully that nothing was saved, and nothing answers 500 (SPEC 5.1, 11.5)."""

import json
import urllib.error
import urllib.request

import pytest

from tests.board.mcp_support import META, MODERN
from tests.conftest import question

# Port 9 (discard) has no PostgreSQL behind it: every connection attempt is refused.
UNREACHABLE = {"DATABASE_URL": "postgres://settle@127.0.0.1:9/settle"}

pytestmark = pytest.mark.parametrize("gunicorn", [UNREACHABLE], indirect=True)


def call(request: urllib.request.Request) -> tuple[int, dict, dict]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_a_post_answers_not_committed(gunicorn):
    status, headers, body = call(urllib.request.Request(
        f"{gunicorn}/api/v1/entries", data=json.dumps(question()).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    ))

    assert status == 503
    assert body["error"]["code"] == "unavailable"
    assert body["error"]["outcome"] == "not_committed"
    assert headers["Retry-After"] == str(body["error"]["retry_after_seconds"])


READS = ["/api/v1/threads", f"/api/v1/operations/{question()['request_id']}"]


# Named, not by the random request_id: pytest-xdist's workers must collect the same ids.
@pytest.mark.parametrize("path", READS, ids=["threads", "operation"])
def test_a_read_answers_unavailable_without_talking_of_writes(gunicorn, path):
    status, headers, body = call(urllib.request.Request(f"{gunicorn}{path}"))

    assert status == 503
    assert body["error"]["code"] == "unavailable"
    assert "nothing was changed" in body["error"]["message"]
    assert "Retry-After" in headers


def mcp_call(gunicorn: str, method: str, params: dict | None = None) -> tuple[int, dict]:
    """One modern JSON-RPC request to /mcp, without a token."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method,
            "params": {**(params or {}), "_meta": META}}
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if "name" in (params or {}):
        headers["Mcp-Name"] = params["name"]
    status, _, answer = call(urllib.request.Request(
        f"{gunicorn}/mcp", data=json.dumps(body).encode(), method="POST", headers=headers
    ))
    return status, answer


def test_mcp_without_a_token_lists_its_tools(gunicorn):
    # No token, nothing to check: the transport itself needs no database.
    status, answer = mcp_call(gunicorn, "tools/list")

    assert status == 200
    assert "post_entry" in {tool["name"] for tool in answer["result"]["tools"]}


def test_mcp_without_a_token_makes_a_request_id(gunicorn):
    status, answer = mcp_call(gunicorn, "tools/call", {"name": "new_request_id", "arguments": {}})

    assert status == 200
    assert answer["result"]["structuredContent"]["http_status"] == 201


def test_mcp_read_without_a_token_answers_unavailable_as_the_api_does(gunicorn):
    status, answer = mcp_call(gunicorn, "tools/call", {"name": "list_threads", "arguments": {}})

    assert status == 200
    structured = answer["result"]["structuredContent"]
    assert structured["http_status"] == 503
    assert structured["data"]["error"]["code"] == "unavailable"
    assert structured["retry_after_seconds"] is not None
