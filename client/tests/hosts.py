"""MCP hosts launching `settle-agent mcp` as a subprocess over stdio, as a desktop assistant
or an IDE does: the official SDK's stdio client, and fastmcp's."""

import json
import os
import signal
import subprocess
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AGENT = str(Path(sys.executable).parent / "settle-agent")


def launch(url: str, token: str | None, journal: Path, *options: str,
           **env: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment a host's configuration gives the server."""
    environment = {"SETTLE_URL": url, "PATH": os.environ.get("PATH", ""), **env}
    if token:
        environment["SETTLE_TOKEN"] = token
    return ["mcp", "--journal", str(journal), *options], environment


@dataclass
class Answer:
    """A tool result as a host reads it."""

    content: dict[str, Any]  # structuredContent
    is_error: bool
    text: str

    def __getitem__(self, key: str) -> Any:
        return self.content[key]


def _answer(result: Any) -> Answer:
    text = result.content[0].text if result.content else ""
    return Answer(result.structured_content, result.is_error, text)


class OfficialHost:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.schemas: dict[str, Any] = {}

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> Answer:
        answer = _answer(await self.client.call_tool(name, arguments or {}))
        return await self.checked(name, answer)

    async def checked(self, name: str, answer: Answer) -> Answer:
        """The same JSON as text content, and structuredContent fits the tool's
        outputSchema whatever isError says (the SDK checks it only when isError is false)."""
        import jsonschema

        assert json.loads(answer.text) == answer.content
        if not self.schemas:
            self.schemas = {tool.name: tool.output_schema for tool in await self.tools()}
        if name in self.schemas:
            jsonschema.validate(answer.content, self.schemas[name])
        return answer

    async def tools(self) -> list[Any]:
        return (await self.client.list_tools()).tools


class FastmcpHost(OfficialHost):
    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> Answer:
        answer = _answer(await self.client.call_tool(name, arguments or {},
                                                     raise_on_error=False))
        return await self.checked(name, answer)

    async def tools(self) -> list[Any]:
        return await self.client.list_tools()


@asynccontextmanager
async def official(url: str, token: str | None, journal: Path, *options: str, **env: str):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args, environment = launch(url, token, journal, *options, **env)
    params = StdioServerParameters(command=AGENT, args=args, env=environment)
    with open(journal.parent.parent / "server.stderr", "a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield OfficialHost(client)


@asynccontextmanager
async def fastmcp_host(url: str, token: str | None, journal: Path, *options: str, **env: str):
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    args, environment = launch(url, token, journal, *options, **env)
    async with Client(StdioTransport(AGENT, args, env=environment, keep_alive=False)) as client:
        yield FastmcpHost(client)


HOSTS = {"official": official, "fastmcp": fastmcp_host}


def server_pid(journal: Path) -> int:
    """The pid of the settle-agent mcp process serving this journal."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp" in command and str(journal).encode() in command:
            return int(entry.name)
    raise LookupError(journal)


def kill(journal: Path) -> None:
    os.kill(server_pid(journal), signal.SIGKILL)


HOST_PROCESS = r"""
import json, sys
import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

command, args, env, errlog, tool, arguments = json.loads(sys.argv[1])

async def main():
    params = StdioServerParameters(command=command, args=args, env=env)
    with open(errlog, "a") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            await client.call_tool(tool, arguments)

anyio.run(main)
"""


def host_process(url: str, token: str | None, journal: Path, tool: str,
                 arguments: dict[str, Any], *options: str) -> subprocess.Popen:
    """A host in a process of its own (the official SDK's stdio client) making one tool
    call: a test can SIGKILL it mid-call and leave its settle-agent orphaned."""
    args, environment = launch(url, token, journal, *options)
    errlog = str(journal.parent.parent / "server.stderr")
    journal.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, "-c", HOST_PROCESS, json.dumps(
        [AGENT, args, environment, errlog, tool, arguments])])


def wait_until_gone(journal: Path, seconds: float) -> bool:
    """Whether the settle-agent serving this journal has exited within SECONDS."""
    import time

    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        try:
            server_pid(journal)
        except LookupError:
            return True
        time.sleep(0.1)
    return False
