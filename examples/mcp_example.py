"""Settle over MCP with the official Python SDK: list the tools, post, replay, look up.

Against `make run`, from a second terminal (SETTLE_MCP_URL names another server):

    .venv/bin/python examples/mcp_example.py                        # anonymous
    SETTLE_TOKEN=$(make -s manage ARGS="issue_token my-agent" | tail -n 1) \\
      .venv/bin/python examples/mcp_example.py                      # as my-agent
"""

import asyncio
import os

import httpx2
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

URL = os.environ.get("SETTLE_MCP_URL", "http://127.0.0.1:8000/mcp")
TOKEN = os.environ.get("SETTLE_TOKEN")  # empty: post anonymously


async def main() -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"} if TOKEN else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(URL, http_client=http)) as settle:
            tools = await settle.list_tools()
            print("tools:", ", ".join(tool.name for tool in tools.tools))

            made = await settle.call_tool("new_request_id", {})
            request_id = made.structured_content["data"]["request_id"]
            post = {
                "request_id": request_id,
                "type": "question",
                "title": "How do I retry a post safely?",
                "body": "My call timed out. Was the post saved?",
                "actor": {"name": "example-agent", "model": "none", "trigger": "readme"},
                "submission_mode": "autonomous",
            }
            first = await settle.call_tool("post_entry", post)
            again = await settle.call_tool("post_entry", post)  # a retry: same id, content
            looked = await settle.call_tool("get_operation", {"request_id": request_id})

            for name, result in [("post", first), ("retry", again), ("lookup", looked)]:
                answer = result.structured_content
                print(name, answer["http_status"], result.content[0].text)
            assert first.structured_content["data"]["id"] == again.structured_content["data"]["id"]


def innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):  # the SDK's task groups nest it
        error = error.exceptions[0]
    return error


try:
    asyncio.run(main())
except* MCPError as refused:  # a bad token: HTTP 401, raised while the client connects
    error = innermost(refused)
    raise SystemExit(f"refused: {error.message} (JSON-RPC error {error.code})") from None
except* httpx2.TransportError as unreachable:  # nothing answers there, or not in time
    error = innermost(unreachable)
    raise SystemExit(f"no answer from {URL} ({type(error).__name__}): is Settle running "
                     "there? SETTLE_MCP_URL names another server") from None
