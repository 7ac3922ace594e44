"""/mcp at the protocol level, with raw HTTP: both eras' negotiation, the headers checked
against the body, the HTTP-level refusals, and every malformed message. None of them is a
500, and none stores anything."""

import base64
import json

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from moderation import actions as moderation
from tests.board.mcp_support import META, MODERN, modern_call, modern_headers, rpc
from tests.conftest import counts, question

ACCEPT = {"HTTP_ACCEPT": "application/json, text/event-stream"}
NOTHING = {"entries": 0, "receipts": 0, "tombstones": 0, "attempts": 0}


def _error(response, code, status):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert body["error"]["code"] == code, body
    return body


def _initialize(client, version, **headers):
    return rpc(client, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}},
    }, **ACCEPT, **headers)


def _modern(method, params=None, rpc_id=1):
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method,
            "params": {**(params or {}), "_meta": META}}


# --- The modern era -------------------------------------------------------------------------


def test_it_answers_discover_without_a_handshake(client, db):
    response = rpc(client, _modern("server/discover"), **modern_headers("server/discover"))
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response
    result = response.json()["result"]
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert result["capabilities"] == {"tools": {}}
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "settle"


def test_it_lists_tools_with_the_caching_fields(client, db):
    response = rpc(client, _modern("tools/list"), **modern_headers("tools/list"))
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    assert {"ttlMs", "cacheScope"} <= set(result)
    names = [tool["name"] for tool in result["tools"]]
    assert names == [
        "new_request_id", "post_entry", "get_operation", "list_threads", "get_thread",
        "list_replies",
    ]
    post = next(tool for tool in result["tools"] if tool["name"] == "post_entry")
    assert post["annotations"]["idempotentHint"] is True
    assert "same request_id" in post["description"] and "30 days" in post["description"]
    assert post["outputSchema"]["properties"]["data"]["anyOf"][1]["required"] == ["error"]


@pytest.mark.parametrize("rpc_id", [0, "0", "a-string-id", 2**40])
def test_it_echoes_the_jsonrpc_id_with_its_type(client, agent, rpc_id):
    response = rpc(
        client, _modern("tools/call", {"name": "new_request_id", "arguments": {}}, rpc_id),
        token=agent.token, **modern_headers("tools/call", "new_request_id"),
    )
    body = response.json()
    assert "id" in body and body["id"] == rpc_id and type(body["id"]) is type(rpc_id)
    assert body["result"]["structuredContent"]["http_status"] == 201


def test_it_refuses_an_unsupported_version_with_the_supported_list(client, db):
    response = rpc(
        client, {**_modern("tools/list"), "params": {"_meta": {**META,
            "io.modelcontextprotocol/protocolVersion": "1900-01-01"}}},
        **modern_headers("tools/list", HTTP_MCP_PROTOCOL_VERSION="1900-01-01"),
    )
    body = _error(response, -32022, 400)
    assert body["error"]["data"] == {
        "supported": ["2026-07-28", "2025-11-25", "2025-06-18"], "requested": "1900-01-01",
    }


def test_it_refuses_modern_meta_under_a_legacy_version(client, db):
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    response = rpc(
        client, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
        **modern_headers("tools/list", HTTP_MCP_PROTOCOL_VERSION="2025-11-25"),
    )
    _error(response, -32022, 400)


def test_it_refuses_a_legacy_header_on_a_modern_body_as_a_mismatch(client, db):
    response = rpc(
        client, _modern("tools/list"),
        **modern_headers("tools/list", HTTP_MCP_PROTOCOL_VERSION="2025-11-25"),
    )
    _error(response, -32020, 400)


def _post_call(**overrides):
    call = _modern("tools/call", {"name": "post_entry", "arguments": question()})
    call.update(overrides)
    return call


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        pytest.param({"HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": "post_entry"},
                     None, id="no-version-header"),
        pytest.param(modern_headers("tools/list", "post_entry"), None, id="method-differs"),
        pytest.param({"HTTP_MCP_PROTOCOL_VERSION": MODERN, "HTTP_MCP_NAME": "post_entry"},
                     None, id="no-method-header"),
        pytest.param(modern_headers("tools/call"), None, id="no-name-header"),
        pytest.param(modern_headers("tools/call", "get_thread"), None, id="name-differs"),
        pytest.param(modern_headers("tools/call", "=?base64?!!!?="), None, id="bad-base64"),
        pytest.param(modern_headers("tools/call", "post_entry"),
                     _post_call(params={"name": "post_entry", "arguments": question(),
                                        "_meta": {**META,
                                        "io.modelcontextprotocol/protocolVersion":
                                        "2025-11-25"}}),
                     id="meta-version-differs"),
    ],
)
def test_it_refuses_headers_that_disagree_with_the_body(client, agent, headers, body):
    response = rpc(client, body or _post_call(), token=agent.token, **{**ACCEPT, **headers})
    _error(response, -32020, 400)
    assert counts() == NOTHING


def test_it_decodes_a_base64_name_header(client, agent, roomy_limits):
    encoded = "=?base64?" + base64.b64encode(b"post_entry").decode() + "?="
    response = rpc(client, _post_call(), token=agent.token,
                   **modern_headers("tools/call", encoded))
    assert response.json()["result"]["structuredContent"]["http_status"] == 201


@pytest.mark.parametrize(
    "meta",
    [None, {}, {"io.modelcontextprotocol/protocolVersion": MODERN},
     {"io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": []}],
)
def test_it_refuses_a_modern_request_without_its_meta(client, db, meta):
    params = {} if meta is None else {"_meta": meta}
    response = rpc(client, {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params},
                   **modern_headers("tools/list"))
    assert _error(response, -32602, 400)["id"] == 3


@pytest.mark.parametrize("method", ["ping", "resources/list", "no/such/method", "initialized"])
def test_it_answers_an_unknown_modern_method_with_404(client, db, method):
    response = rpc(client, _modern(method), **modern_headers(method))
    _error(response, -32601, 404)


@pytest.mark.parametrize(
    "params",
    [
        {"name": "drop_tables", "arguments": {}},
        {"name": "post_entry", "arguments": []},
        {"name": "post_entry", "arguments": "request_id=1"},
        {"name": "post_entry", "arguments": 7},
    ],
    ids=["unknown-tool", "args-list", "args-string", "args-number"],
)
def test_it_answers_bad_call_params_with_32602(client, agent, params):
    response = rpc(client, _modern("tools/call", params), token=agent.token,
                   **modern_headers("tools/call", params["name"]))
    _error(response, -32602, 400)
    assert counts() == NOTHING


@pytest.mark.parametrize("params", [{"arguments": {}}, {"name": 5, "arguments": {}}])
def test_it_answers_a_call_without_a_string_name(client, agent, params):
    # Modern: no Mcp-Name header can match a missing or non-string name.
    modern = rpc(client, _modern("tools/call", params), token=agent.token,
                 **modern_headers("tools/call", "5"))
    _error(modern, -32020, 400)
    # Legacy: no header to check, so the params themselves are invalid.
    legacy = rpc(client, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
                 token=agent.token, HTTP_MCP_PROTOCOL_VERSION="2025-11-25", **ACCEPT)
    _error(legacy, -32602, 200)
    assert counts() == NOTHING


def test_it_answers_a_tool_error_as_a_result(client, agent):
    response = modern_call(client, "post_entry", {"request_id": "nope"}, token=agent.token)
    result = response.json()["result"]
    assert response.status_code == 200
    assert result["isError"] is True
    assert result["structuredContent"]["http_status"] == 422
    assert "request_id" in result["content"][0]["text"] or "Fix" in result["content"][0]["text"]


# --- The legacy era -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "answered"),
    [("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"), ("2024-11-05", "2025-11-25"),
     ("2026-07-28", "2025-11-25"), ("garbage", "2025-11-25")],
)
def test_it_negotiates_the_legacy_version(client, db, requested, answered):
    response = _initialize(client, requested)
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response
    result = response.json()["result"]
    assert result["protocolVersion"] == answered
    assert result["capabilities"] == {"tools": {}}
    assert result["serverInfo"]["name"] == "settle"


def test_it_refuses_an_initialize_without_a_version(client, db):
    response = rpc(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                   **ACCEPT)
    _error(response, -32602, 400)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
def test_it_serves_a_legacy_session_statelessly(client, agent, roomy_limits, version):
    legacy = {"HTTP_MCP_PROTOCOL_VERSION": version, **ACCEPT}
    # the handshake's notification
    initialized = rpc(client, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                      **legacy)
    assert initialized.status_code == 202 and initialized.content == b""
    # ping
    ping = rpc(client, {"jsonrpc": "2.0", "id": "p", "method": "ping"}, **legacy)
    assert ping.json() == {"jsonrpc": "2.0", "id": "p", "result": {}}
    # tools, in the legacy shape
    listed = rpc(client, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **legacy)
    result = listed.json()["result"]
    assert "resultType" not in result and "ttlMs" not in result
    assert all(tool["outputSchema"]["type"] == "object" for tool in result["tools"])
    called = rpc(client, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                          "params": {"name": "post_entry", "arguments": question()}},
                 token=agent.token, **legacy)
    result = called.json()["result"]
    assert "resultType" not in result
    assert result["structuredContent"]["http_status"] == 201
    assert result["isError"] is False
    # discover is not a legacy method
    discover = rpc(client, {"jsonrpc": "2.0", "id": 4, "method": "server/discover"}, **legacy)
    assert discover.json()["error"]["code"] == -32601
    # arguments that are not an object
    bad = rpc(client, {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                       "params": {"name": "post_entry", "arguments": ["x"]}}, **legacy)
    assert bad.json()["error"]["code"] == -32602
    assert counts()["entries"] == 1


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "nonsense"])
def test_it_refuses_a_later_request_at_an_unsupported_version(client, db, version):
    response = rpc(client, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                   HTTP_MCP_PROTOCOL_VERSION=version, **ACCEPT)
    body = _error(response, -32022, 400)
    assert "2025-11-25" in body["error"]["data"]["supported"]


# --- HTTP-level refusals ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["get", "delete", "put", "patch"])
def test_it_answers_other_methods_with_405(client, db, method):
    response = getattr(client, method)("/mcp")
    assert response.status_code == 405
    assert "POST" in response["Allow"]


def test_it_has_no_trailing_slash_variant(client, db):
    assert client.post("/mcp/", data="{}", content_type="application/json").status_code == 404


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "post_entry"}},
    ],
)
def test_it_accepts_notifications_with_202(client, agent, message):
    response = rpc(client, message, token=agent.token, **ACCEPT)
    assert response.status_code == 202
    assert response.content == b""
    assert counts() == NOTHING


def test_it_refuses_a_notification_at_an_unsupported_version(client, db):
    response = rpc(client, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                   HTTP_MCP_PROTOCOL_VERSION="1999-01-01", **ACCEPT)
    _error(response, -32022, 400)


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://localhost:9999"])
def test_it_refuses_a_foreign_origin_with_403(client, agent, origin):
    response = rpc(client, _post_call(), token=agent.token, HTTP_ORIGIN=origin,
                   **modern_headers("tools/call", "post_entry"))
    assert response.status_code == 403
    assert counts() == NOTHING


def test_it_serves_an_allowed_origin(client, agent, roomy_limits, settings):
    settings.SETTLE_MCP_ALLOWED_ORIGINS = ["https://agents.example"]
    response = rpc(client, _post_call(), token=agent.token, HTTP_ORIGIN="https://agents.example",
                   **modern_headers("tools/call", "post_entry"))
    assert response.json()["result"]["structuredContent"]["http_status"] == 201


@pytest.mark.parametrize(
    ("listed", "origin"),
    [("https://Agents.Example:443", "https://agents.example"),
     ("https://agents.example", "https://AGENTS.example:443")],
)
def test_it_compares_origins_as_browsers_serialize_them(
    client, agent, roomy_limits, settings, listed, origin
):
    settings.SETTLE_MCP_ALLOWED_ORIGINS = [listed]
    response = rpc(client, _post_call(), token=agent.token, HTTP_ORIGIN=origin,
                   **modern_headers("tools/call", "post_entry"))
    assert response.json()["result"]["structuredContent"]["http_status"] == 201


def test_it_refuses_null_even_when_listed(client, agent, settings):
    settings.SETTLE_MCP_ALLOWED_ORIGINS = ["null"]
    response = rpc(client, _post_call(), token=agent.token, HTTP_ORIGIN="null",
                   **modern_headers("tools/call", "post_entry"))
    assert response.status_code == 403
    assert counts() == NOTHING


@pytest.mark.parametrize("authorization", ["Bearer settle_unknown", "Basic dXNlcjpwYXNz", "Bearer"])
def test_it_refuses_an_unknown_token_before_dispatch(client, db, authorization):
    # Even a malformed body: the token is checked first.
    for body in [_post_call(), "{not json"]:
        response = rpc(client, body, HTTP_AUTHORIZATION=authorization,
                       **modern_headers("tools/call", "post_entry"))
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")
    assert counts() == NOTHING


@pytest.mark.parametrize(
    "case",
    ["bad arguments", "arguments not an object", "Mcp-Name not the body's", "wrong Accept"],
)
def test_it_refuses_an_unknown_token_on_a_post_before_any_other_refusal(client, db, case):
    # given: a post_entry call (whose token the post itself reads) that something else
    # would refuse too
    call, headers = _post_call(), modern_headers("tools/call", "post_entry")
    if case == "bad arguments":
        call["params"]["arguments"]["type"] = "poem"
    elif case == "arguments not an object":
        call["params"]["arguments"] = ["not", "an", "object"]
    elif case == "Mcp-Name not the body's":
        headers["HTTP_MCP_NAME"] = "get_operation"
    else:
        headers["HTTP_ACCEPT"] = "text/html"

    # when
    response = rpc(client, call, HTTP_AUTHORIZATION="Bearer settle_unknown", **headers)

    # then: the token's 401 comes first, as the transport's, and nothing is saved
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == -32600
    assert counts() == NOTHING


def test_it_leaves_a_post_without_a_token_to_the_tool_where_anonymous_posting_is_off(
    client, db, settings
):
    # given: no token at all, which the transport lets through (reads need none)
    settings.SETTLE_ALLOW_ANONYMOUS = False

    # when
    response = rpc(client, _post_call(), **modern_headers("tools/call", "post_entry"))

    # then: the post's own refusal, as a tool result, as before the transport left the
    # post's token to the post
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["http_status"] == 401
    assert counts() == NOTHING


def test_it_refuses_a_revoked_token_also_on_a_retry(client, agent, roomy_limits):
    payload = question()
    first = modern_call(client, "post_entry", payload, token=agent.token)
    assert first.json()["result"]["structuredContent"]["http_status"] == 201
    moderation.token_revoke(actor="operator", name=agent.name)
    for name, arguments in [("post_entry", payload), ("get_operation",
                                                      {"request_id": payload["request_id"]})]:
        response = modern_call(client, name, arguments, token=agent.token)
        assert response.status_code == 401
        assert response["WWW-Authenticate"].startswith("Bearer")
    discover = rpc(client, _modern("server/discover"), token=agent.token,
                   **modern_headers("server/discover"))
    assert discover.status_code == 401


def test_it_refuses_an_oversize_body(client, agent, settings):
    payload = question(body="x" * settings.SETTLE_MAX_BODY_BYTES)
    response = modern_call(client, "post_entry", payload, token=agent.token)
    body = _error(response, -32600, 413)
    assert body["id"] is None
    assert counts() == NOTHING


@pytest.mark.parametrize(
    "length", ["\u00b2", "1" * 5000], ids=["superscript-two", "5000-digits"]
)
def test_it_reads_a_content_length_that_is_no_number_as_unreadable(client, agent, length):
    # gunicorn refuses both before Settle; another server may pass them on. Neither may
    # reach int() (which refuses "²", and numbers of more than 4,300 digits).
    body = _modern("tools/call", {"name": "post_entry", "arguments": question()})
    response = rpc(client, body, token=agent.token, CONTENT_LENGTH=length,
                   **modern_headers("tools/call", "post_entry"))

    _error(response, -32600, 413)
    assert counts() == NOTHING


@pytest.mark.parametrize(
    "raw",
    [b"{", b"", b"not json", b"\xff\xfe{}", b'{"jsonrpc": "2.0", "id": NaN}',
     b"[" * 50_000 + b"]" * 50_000],
    ids=["truncated", "empty", "text", "bad-utf8", "nan", "deep"],
)
def test_it_answers_unparseable_json_with_32700(client, db, raw):
    response = rpc(client, raw, **modern_headers("tools/list"))
    assert _error(response, -32700, 400)["id"] is None


@pytest.mark.parametrize(
    "message",
    [
        [],
        [_modern("tools/list")],
        [_modern("tools/list"), _modern("tools/list", rpc_id=2)],
        "a string",
        42,
        None,
        {"id": 1, "method": "tools/list"},
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": ""},
        {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"},
    ],
    ids=["empty-batch", "batch-of-one", "batch", "string", "number", "null", "no-jsonrpc",
         "old-jsonrpc", "no-method", "a-response", "an-error", "method-number", "method-empty",
         "id-null", "id-bool", "id-float", "id-object"],
)
def test_it_answers_an_invalid_message_with_32600(client, db, message):
    response = rpc(client, json.dumps(message), **modern_headers("tools/list"))
    _error(response, -32600, 400)


@pytest.mark.parametrize("params", [[], "x", 5, True])
def test_it_answers_params_that_are_not_an_object_with_32602(client, db, params):
    message = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": params}
    response = rpc(client, message, **modern_headers("tools/list"))
    assert _error(response, -32602, 400)["id"] == 9


def test_it_refuses_a_non_json_content_type_and_accept(client, db):
    body = json.dumps(_modern("tools/list"))
    response = client.post("/mcp", data=body, content_type="text/plain",
                           **modern_headers("tools/list"))
    assert response.status_code == 415
    response = client.post("/mcp", data=body, content_type="application/json",
                           **modern_headers("tools/list", HTTP_ACCEPT="text/html"))
    assert response.status_code == 406


@pytest.mark.parametrize(
    ("name", "arguments", "outcome"),
    [("list_threads", {}, "not_committed"), ("post_entry", question(), "unknown")],
)
def test_it_answers_an_unexpected_fault_as_unavailable(
    client, agent, monkeypatch, name, arguments, outcome
):
    from board.mcp import endpoint as mcp

    def explode(request, arguments):
        raise RuntimeError("boom")

    tool = mcp.TOOLS[name]
    monkeypatch.setitem(mcp.TOOLS, name, tool.__class__(**{**tool.__dict__, "run": explode}))
    response = modern_call(client, name, arguments, token=agent.token)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["http_status"] == 503
    assert result["structuredContent"]["data"]["error"]["outcome"] == outcome
    assert result["structuredContent"]["retry_after_seconds"] == 1


@hypothesis_settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    message=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda children: st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["jsonrpc", "id", "method", "params", "name", "arguments", "_meta"]),
            children, max_size=5,
        ),
        max_leaves=12,
    ),
    method=st.sampled_from(["tools/call", "tools/list", "server/discover", "initialize", "ping"]),
    version=st.sampled_from([MODERN, "2025-11-25", "2025-06-18", "bogus", None]),
)
def test_it_never_answers_500_or_stores_anything(client, db, message, method, version):
    if isinstance(message, dict):
        message = {"jsonrpc": "2.0", "method": method, **message}
    headers = {"HTTP_MCP_METHOD": method, "HTTP_MCP_NAME": "post_entry", **ACCEPT}
    if version:
        headers["HTTP_MCP_PROTOCOL_VERSION"] = version
    response = rpc(client, json.dumps(message), **headers)
    assert response.status_code < 500
    if response.status_code != 202:
        assert response["Content-Type"].startswith("application/json")
        body = response.json()
        # -32603 and a tool's 503 are what an unexpected exception becomes: a bug, never
        # an answer to bad input (the database is healthy here).
        assert body.get("error", {}).get("code") != -32603, body
        structured = (body.get("result") or {}).get("structuredContent") or {}
        assert structured.get("http_status") != 503, body
    assert counts() == NOTHING


LONE = "\ud800"  # a lone surrogate: valid JSON text, with no UTF-8 form


def test_it_answers_a_lone_surrogate_argument_name_as_a_tool_error(client, agent):
    response = modern_call(client, "get_thread", {LONE: 1}, token=agent.token)

    assert response.status_code == 200
    structured = response.json()["result"]["structuredContent"]
    assert structured["http_status"] == 422
    assert structured["data"]["error"]["code"] == "invalid_request"


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": LONE, "method": "tools/list", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 1, "method": LONE, "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": LONE, "arguments": {}, "_meta": META}},
    ],
)
def test_it_echoes_a_lone_surrogate_without_an_internal_error(client, db, message):
    response = rpc(client, json.dumps(message), **modern_headers(message["method"]))

    assert response.status_code < 500
    body = response.json()
    assert body.get("error", {}).get("code") != -32603, body
    assert body["id"] == message["id"]
    assert counts() == NOTHING


def test_it_ignores_a_session_id_and_never_mints_one(client, db):
    for headers in (modern_headers("tools/list"),
                    {"HTTP_MCP_PROTOCOL_VERSION": "2025-11-25", **ACCEPT}):
        message = (_modern("tools/list") if "HTTP_MCP_METHOD" in headers
                   else {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        response = rpc(client, message, HTTP_MCP_SESSION_ID="stale-session", **headers)
        assert response.status_code == 200
        assert "tools" in response.json()["result"]
        assert "Mcp-Session-Id" not in response


def test_get_operation_of_an_unknown_id_says_to_post_it_with_the_same_id(client, agent):
    response = modern_call(
        client, "get_operation", {"request_id": question()["request_id"]}, token=agent.token
    )

    result = response.json()["result"]
    assert result["structuredContent"]["http_status"] == 404
    assert "call post_entry with this request_id and the same content" in (
        result["content"][0]["text"]
    )
