"""How an attempt reaches Settle: HTTP (httpx, no retries) or MCP (the official SDK).

Each transport makes exactly one request per call and answers an Answer (the HTTP status,
the JSON body, the Retry-After in seconds) or raises AttemptFailed naming what ended it.
"""

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import httpx


@dataclass
class Answer:
    status: int
    data: dict[str, Any]
    retry_after: float | None


class AttemptFailed(Exception):
    """No answer: a transport error or a timeout; reason is the exception's class name."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Transport(Protocol):
    def post_entry(self, body: str, *, timeout: float) -> Answer: ...

    def get_operation(self, request_id: str, *, timeout: float) -> Answer: ...

    def close(self) -> None: ...


def _retry_after(header: str | None, data: dict[str, Any]) -> float | None:
    if header:
        try:
            return max(0.0, float(header))
        except ValueError:
            pass
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("retry_after_seconds"), int | float):
        return max(0.0, float(error["retry_after_seconds"]))
    return None


class HttpTransport:
    def __init__(self, base_url: str, token: str | None) -> None:
        headers = {"Accept": "application/json", "User-Agent": "settle-client/0.1"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.client = httpx.Client(
            base_url=base_url, headers=headers, transport=httpx.HTTPTransport(retries=0),
            follow_redirects=False,
        )

    def _send(self, method: str, path: str, *, timeout: float, content: bytes | None = None):
        try:
            response = self.client.request(
                method, path, content=content, timeout=httpx.Timeout(timeout),
                headers={"Content-Type": "application/json"} if content is not None else None,
            )
        except httpx.HTTPError as error:
            raise AttemptFailed(type(error).__name__) from None
        try:
            data = response.json()
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        return Answer(response.status_code, data,
                      _retry_after(response.headers.get("Retry-After"), data))

    def post_entry(self, body: str, *, timeout: float) -> Answer:
        return self._send("POST", "/api/v1/entries", timeout=timeout, content=body.encode())

    def get_operation(self, request_id: str, *, timeout: float) -> Answer:
        return self._send("GET", f"/api/v1/operations/{request_id}", timeout=timeout)

    def close(self) -> None:
        self.client.close()


class McpTransport:
    """Speaks to /mcp through the official SDK: one connection and one tool call a call."""

    def __init__(self, base_url: str, token: str | None) -> None:
        try:
            import mcp  # noqa: F401
        except ImportError as error:  # pragma: no cover - the extra is missing
            raise ImportError("transport='mcp' needs pip install 'settle-client[mcp]'") from error
        self.url = f"{base_url}/mcp"
        self.token = token

    def _call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Answer:
        import anyio

        try:
            # On a thread of its own: anyio.run refuses a thread whose event loop is already
            # running (a caller inside async code, or a library that keeps a loop in the
            # calling thread, as Playwright's sync API does).
            with ThreadPoolExecutor(max_workers=1) as pool:
                result = pool.submit(anyio.run, self._call_async, tool, arguments, timeout).result()
        except AttemptFailed:
            raise
        except BaseException as error:  # noqa: BLE001 - any failure is "no answer"
            if isinstance(error, KeyboardInterrupt | SystemExit):
                raise
            raise AttemptFailed(_reason(error)) from None
        return result

    async def _call_async(self, tool: str, arguments: dict[str, Any], timeout: float) -> Answer:
        import anyio
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        with anyio.fail_after(timeout):
            async with httpx2.AsyncClient(
                headers=headers, timeout=httpx2.Timeout(timeout),
                transport=httpx2.AsyncHTTPTransport(retries=0),
            ) as http:
                transport = streamable_http_client(self.url, http_client=http,
                                                   terminate_on_close=False)
                async with Client(transport, read_timeout_seconds=timeout) as client:
                    result = await client.call_tool(tool, arguments)
        content = result.structured_content or {}
        if "http_status" not in content:
            raise AttemptFailed("MalformedToolResult")
        data = content.get("data") if isinstance(content.get("data"), dict) else {}
        wait = content.get("retry_after_seconds")
        return Answer(int(content["http_status"]), data,
                      float(wait) if isinstance(wait, int | float) else _retry_after(None, data))

    def post_entry(self, body: str, *, timeout: float) -> Answer:
        return self._call("post_entry", json.loads(body), timeout)

    def get_operation(self, request_id: str, *, timeout: float) -> Answer:
        return self._call("get_operation", {"request_id": request_id}, timeout)

    def close(self) -> None:
        pass


def _reason(error: BaseException) -> str:
    """The class name of what ended the attempt, looking inside exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return type(error).__name__
