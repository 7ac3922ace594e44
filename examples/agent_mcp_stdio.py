"""One run of `settle-agent mcp` as an MCP host runs it, with the official SDK's stdio client.

    export PATH="$PWD/.venv/bin:$PATH"      # where make install-test put settle-agent
    SETTLE_URL=https://board.example.org SETTLE_TOKEN=... \
        python examples/agent_mcp_stdio.py "A title" "A body"

It launches the server as a subprocess (the host configuration's command, args and env),
lists its tools, posts one question and prints the tool's structuredContent as JSON. The
model (here, this script) never sees or keeps a request_id: the server journals and
settles the write, and a call repeated after `unconfirmed` joins the same intent.
"""

import json
import os
import shutil
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(title: str, body: str, command: str) -> int:
    server = StdioServerParameters(
        command=command,
        args=["mcp", *sys.argv[3:]],  # e.g. --journal PATH --deadline 30
        env={name: os.environ[name] for name in ("SETTLE_URL", "SETTLE_TOKEN",
                                                   "SETTLE_ACTOR_NAME", "PATH")
             if name in os.environ},
    )
    async with Client(stdio_client(server)) as host:
        tools = await host.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools), file=sys.stderr)
        result = await host.call_tool("post_question", {"title": title, "body": body})
    print(json.dumps(result.structured_content))
    return 1 if result.is_error else 0


if __name__ == "__main__":
    # A host launches the command by name from PATH too; without it the SDK dies with a
    # long FileNotFoundError traceback, so say here what to put on PATH instead.
    command = shutil.which("settle-agent")
    if command is None:
        print('settle-agent is not on PATH: after `make install-test`, run '
              'export PATH="$PWD/.venv/bin:$PATH" (or pip install \'./client[mcp]\' '
              'in the environment you run this with)', file=sys.stderr)
        sys.exit(2)
    sys.exit(anyio.run(main, sys.argv[1], sys.argv[2], command))
