"""Talking to /mcp in tests: raw JSON-RPC posts, the official SDK client, and the checks
every tool result must pass."""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import httpx2
import jsonschema
from django.test import Client as DjangoClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from board.http.json_schemas import ERROR_SCHEMA
from board.mcp.endpoint import TOOLS, _output_schema

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def modern_headers(method: str, name: str | None = None, **extra) -> dict:
    headers = {"HTTP_MCP_PROTOCOL_VERSION": MODERN, "HTTP_MCP_METHOD": method}
    if name is not None:
        headers["HTTP_MCP_NAME"] = name
    headers.setdefault("HTTP_ACCEPT", "application/json, text/event-stream")
    headers.update(extra)
    return headers


def rpc(client: DjangoClient, body, *, token: str | None = None, **headers):
    """POST one raw body (a dict/list is JSON-encoded) to /mcp."""
    if token:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post("/mcp", data=data, content_type="application/json", **headers)


def modern_call(client: DjangoClient, name: str, arguments, *, token: str | None = None,
                rpc_id=1):
    """A tools/call as the 2026-07-28 SDK client sends it; returns the HTTP response."""
    body = {
        "jsonrpc": "2.0",
        "id": rpc_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": META},
    }
    return rpc(client, body, token=token, **modern_headers("tools/call", name))


def tool_result(client: DjangoClient, name: str, arguments, *, token: str | None = None) -> dict:
    """The checked result of a modern tools/call."""
    response = modern_call(client, name, arguments, token=token)
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    check_result(name, result)
    return result


def check_result(name: str, result: dict) -> None:
    """What every tool result holds, validated against the tool's outputSchema with
    jsonschema (the SDK does not check error results)."""
    structured = result["structuredContent"]
    jsonschema.validate(structured, _output_schema(TOOLS[name].success_schema))
    assert set(structured) == {"http_status", "data", "retry_after_seconds"}
    assert result["isError"] is (structured["http_status"] >= 400)
    assert result["content"][0]["type"] == "text" and result["content"][0]["text"]
    if structured["http_status"] >= 400:
        jsonschema.validate(structured["data"], ERROR_SCHEMA)


def sdk_check(name: str, call_result) -> dict:
    """The SDK's CallToolResult, checked like a raw one; returns structuredContent."""
    raw = call_result.model_dump(by_alias=True, exclude_none=True)
    check_result(name, raw)
    return raw["structuredContent"]


@asynccontextmanager
async def sdk_client(url: str, *, token: str | None, mode: str):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, cache=None) as client:
            yield client


def run(coroutine):
    # In a thread of its own: Playwright's sync API, once a browser test has started it in
    # this process, leaves an event loop running on the main thread, where asyncio.run
    # refuses to start another.
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()

