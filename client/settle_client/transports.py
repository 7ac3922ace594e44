"""How an attempt reaches Settle: HTTP (httpx, no retries) or MCP (the official SDK).

Each transport makes exactly one request per call and answers an Answer (the HTTP status,
the JSON body, the Retry-After in seconds) or raises AttemptFailed naming what ended it.
"""

import functools
import json
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

import anyio  # httpx's own dependency
import httpx

# SPEC 13: an answer is read up to 8 MiB and within its attempt's timeout; past either it
# is no usable answer, and the loop goes on within its deadline.
MAX_ANSWER_BYTES = 8 * 1024 * 1024


@dataclass
class Answer:
    status: int
    data: dict[str, Any]
    retry_after: float | None
    readable: bool = True  # False: the body was no JSON object the client reads (data {})


class AttemptFailed(Exception):
    """No answer: a transport error or a timeout; reason is the exception's class name."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class AnswerTooLarge(Exception):
    """An answer longer than MAX_ANSWER_BYTES, announced or read: read no further."""


class AnswerEncoded(Exception):
    """An MCP answer in a Content-Encoding although identity was asked for: not read."""


class Transport(Protocol):
    def post_entry(self, body: str, *, timeout: float) -> Answer: ...

    def get_operation(self, request_id: str, *, timeout: float) -> Answer: ...

    def close(self) -> None: ...


# SPEC 13: a wait a server asks for is a finite number of seconds from 0 to a day; any
# other (negative, NaN, infinite, 400 digits, a string) is absent, and the backoff applies.
LONGEST_RETRY_AFTER = 86_400
# A Retry-After header's delay-seconds is ASCII digits alone (RFC 9110, 10.2.3): no sign,
# point, exponent or underscore, which float() and int() would take ("1e3", "1_000").
DELAY_SECONDS = re.compile(r"[0-9]+")
# An answer nested deeper than this is no JSON object the client reads: Settle's are a
# few levels deep, and a deep one fails a tool result's serialization further on.
DEEPEST_ANSWER = 64


def retry_after_header(text: str | None) -> float | None:
    """A Retry-After header's wait in seconds, or None (absent) unless it is delay-seconds
    from 0 to LONGEST_RETRY_AFTER. An HTTP-date is not read: absent too."""
    if text is None:
        return None
    digits = text.strip(" \t")
    if not DELAY_SECONDS.fullmatch(digits):
        return None
    # Past a day long before int()'s limit on digits (400 digits are a refusal, not a wait).
    if len(digits.lstrip("0")) > len(str(LONGEST_RETRY_AFTER)):
        return None
    return retry_after_seconds(int(digits))


def retry_after_seconds(value: Any) -> float | None:
    """A retry_after_seconds (a JSON number) in seconds, or None (absent) unless it is a
    finite number from 0 to LONGEST_RETRY_AFTER: a string, even "5", is none."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 <= value <= LONGEST_RETRY_AFTER:  # NaN fails both comparisons
        return None
    return float(value)


def _retry_after(header: str | None, data: dict[str, Any]) -> float | None:
    if (seconds := retry_after_header(header)) is not None:
        return seconds
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return retry_after_seconds(error.get("retry_after_seconds"))
    return None


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_object(received: bytes | str) -> dict[str, Any] | None:
    """The answer's JSON object, or None when it is none this client reads: not JSON (NaN
    and Infinity included, which Python's parser would take), not an object, or nested
    past DEEPEST_ANSWER."""
    try:
        data = json.loads(received, parse_constant=_no_constants)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's stack
        return None
    if not isinstance(data, dict) or not within_depth(data, DEEPEST_ANSWER):
        return None
    return data


def within_depth(value: Any, depth: int) -> bool:
    """Whether value nests no deeper than depth (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if level > depth:
            return False
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return True


class HttpTransport:
    """One POST or GET an attempt, bounded as a whole by the attempt's timeout.

    httpx's own timeouts bound each read and write, not the attempt: an answer trickling
    in a byte at a time never trips them. So each attempt runs in an event loop of its
    own under anyio.fail_after (the loop's monotonic clock), which cancels it wherever it
    is when its time is up, and the answer is streamed and dropped past MAX_ANSWER_BYTES.
    """

    def __init__(self, base_url: str, token: str | None) -> None:
        self.base_url = base_url
        self.headers = {"Accept": "application/json", "User-Agent": "settle-client/0.1"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        # Made once: loading the trust store for every attempt would spend its time.
        self.tls = httpx.create_ssl_context()

    def _send(self, method: str, path: str, *, timeout: float,
              content: bytes | None = None) -> Answer:
        try:
            status, headers, received = _on_a_loop_of_its_own(
                self._send_async, method, path, timeout, content)
        except (httpx.HTTPError, httpx.InvalidURL, AnswerTooLarge) as error:
            raise AttemptFailed(type(error).__name__) from None
        except TimeoutError:
            raise AttemptFailed("TimeoutError") from None
        data = json_object(received)
        return Answer(status, data or {}, _retry_after(headers.get("Retry-After"), data or {}),
                      readable=data is not None)

    async def _send_async(self, method: str, path: str, timeout: float,
                          content: bytes | None) -> tuple[int, httpx.Headers, bytes]:
        # An encoded answer could unzip past any bound in one read: ask for none.
        headers = {**self.headers, "Accept-Encoding": "identity"}
        if content is not None:
            headers["Content-Type"] = "application/json"
        with anyio.fail_after(timeout):
            async with httpx.AsyncClient(
                base_url=self.base_url, headers=headers, timeout=httpx.Timeout(timeout),
                transport=httpx.AsyncHTTPTransport(retries=0, verify=self.tls),
                follow_redirects=False,
            ) as client, client.stream(method, path, content=content) as response:
                received = await _read_capped(response)
        return response.status_code, response.headers, received

    def post_entry(self, body: str, *, timeout: float) -> Answer:
        return self._send("POST", "/api/v1/entries", timeout=timeout, content=body.encode())

    def get_operation(self, request_id: str, *, timeout: float) -> Answer:
        # Escaped: an id is sent as the caller gave it, and a path must stay one segment.
        return self._send(
            "GET", f"/api/v1/operations/{quote(request_id, safe='')}", timeout=timeout
        )

    def get(self, path: str, *, timeout: float) -> Answer:
        """One GET of a public read (SPEC 5.2), answered as Settle answered it."""
        return self._send("GET", path, timeout=timeout)

    def close(self) -> None:
        pass


async def _read_capped(response: httpx.Response) -> bytes:
    """The answer's body, decoded, up to MAX_ANSWER_BYTES; past them AnswerTooLarge.

    Read raw and decoded here: httpx would unzip each read whole, and a small gzipped
    read can unzip to a thousand times its size.
    """
    announced = response.headers.get("Content-Length", "")
    if announced.isdigit() and int(announced) > MAX_ANSWER_BYTES:
        raise AnswerTooLarge(announced)
    received = bytearray()
    async for chunk in response.aiter_raw():
        received += chunk
        if len(received) > MAX_ANSWER_BYTES:
            raise AnswerTooLarge(f"more than {MAX_ANSWER_BYTES} bytes")
    return _decoded(bytes(received), response.headers.get("Content-Encoding", ""))


def _decoded(received: bytes, encoding: str) -> bytes:
    """An answer sent gzipped or deflated although identity was asked for, unzipped no
    further than MAX_ANSWER_BYTES; any other encoding is no usable answer."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return received
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise httpx.DecodingError(f"answer encoded as {encoding!r}")
    unzip = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or a zlib header
    try:
        decoded = unzip.decompress(received, MAX_ANSWER_BYTES + 1)
    except zlib.error as error:
        raise httpx.DecodingError(str(error)) from None
    if len(decoded) > MAX_ANSWER_BYTES or unzip.unconsumed_tail:
        raise AnswerTooLarge(f"unzips past {MAX_ANSWER_BYTES} bytes")
    return decoded


def _on_a_loop_of_its_own(function, *args):
    """Run an async attempt to its end in a new event loop on a thread of its own.

    anyio.run refuses a thread whose event loop is already running (a caller inside async
    code, or a library that keeps a loop in the calling thread, as Playwright's sync API
    does), and a thread of its own keeps the caller's threads independent of each other.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, function, *args).result()


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
        try:
            result = _on_a_loop_of_its_own(self._call_async, tool, arguments, timeout)
        except AttemptFailed:
            raise
        except BaseException as error:  # noqa: BLE001 - any failure is "no answer"
            if isinstance(error, KeyboardInterrupt | SystemExit):
                raise
            raise AttemptFailed(_reason(error)) from None
        return result

    async def _call_async(self, tool: str, arguments: dict[str, Any], timeout: float) -> Answer:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        # The SDK turns an HTTP refusal (401 for the token, 403 for an Origin, a proxy's
        # 502) into a JSON-RPC error and drops the status; the exchanges noted here keep it.
        exchanges = _Exchanges()
        # Encoded answers are not read (_Exchanges.answered): ask for none.
        headers = {"Accept-Encoding": "identity"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            with anyio.fail_after(timeout):
                async with httpx2.AsyncClient(
                    headers=headers, timeout=httpx2.Timeout(timeout),
                    transport=httpx2.AsyncHTTPTransport(retries=0),
                    event_hooks={"request": [exchanges.sent], "response": [exchanges.answered]},
                ) as http:
                    transport = streamable_http_client(self.url, http_client=http,
                                                       terminate_on_close=False)
                    async with Client(transport, read_timeout_seconds=timeout) as client:
                        result = await client.call_tool(tool, arguments)
        except Exception:
            answer = exchanges.refusal()
            if answer is None:
                raise
            return answer
        content = result.structured_content or {}
        if "http_status" not in content:
            raise AttemptFailed("MalformedToolResult")
        # Read as an HTTP answer is: a constant or a depth the client does not read is none.
        data = json_object(json.dumps(content.get("data")))
        status = content["http_status"]
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            raise AttemptFailed("MalformedToolResult")
        wait = retry_after_seconds(content.get("retry_after_seconds"))
        if wait is None:
            wait = _retry_after(None, data or {})
        return Answer(status, data or {}, wait, readable=data is not None)

    def post_entry(self, body: str, *, timeout: float) -> Answer:
        return self._call("post_entry", json.loads(body), timeout)

    def get_operation(self, request_id: str, *, timeout: float) -> Answer:
        return self._call("get_operation", {"request_id": request_id}, timeout)

    def close(self) -> None:
        pass


# The codes SPEC 5 gives the statuses /mcp answers before any tool runs.
TRANSPORT_CODES = {401: "unauthorized", 403: "forbidden"}


class _Exchanges:
    """The HTTP exchanges of one tool call: which JSON-RPC method each POST carried and
    the status it was answered with."""

    def __init__(self) -> None:
        self.tool_call_sent = False
        self.tool_call_status: int | None = None
        self.last: tuple[int, str | None] | None = None
        self.unusable = False  # an answer past MAX_ANSWER_BYTES, or encoded

    async def sent(self, request) -> None:
        if _rpc_method(request) == "tools/call":
            self.tool_call_sent = True

    async def answered(self, response) -> None:
        status = (response.status_code, response.headers.get("Retry-After"))
        self.last = status
        if _rpc_method(response.request) == "tools/call":
            self.tool_call_status = status
        # The SDK reads a JSON answer whole: bound it before the SDK reads a byte. An
        # encoded one would be unzipped by httpx2 a read at a time past any bound.
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        announced = response.headers.get("Content-Length", "")
        if encoding != "identity":
            self.unusable = True
            raise AnswerEncoded(encoding)
        if announced.isdigit() and int(announced) > MAX_ANSWER_BYTES:
            self.unusable = True
            raise AnswerTooLarge(announced)
        response.stream = _capped_stream_type()(response.stream, self)

    def refusal(self) -> Answer | None:
        """The HTTP answer that ended the call, when the server (or a proxy) gave one.

        The tool call's own status when it was answered with an error; else, when the
        tool call never left, the status that refused the exchange before it. A call
        that left and got no answer is not one: the write may have happened; nor is an
        answer too large or encoded to read, whatever its status.
        """
        if self.unusable:
            return None
        if self.tool_call_status is not None:
            chosen = self.tool_call_status
        elif not self.tool_call_sent and self.last is not None:
            chosen = self.last
        else:
            return None
        status, header = chosen
        if status < 400:
            return None
        code = TRANSPORT_CODES.get(status, f"http_{status}")
        return Answer(status, {"error": {"code": code, "message": f"/mcp answered {status}"}},
                      _retry_after(header, {}))


@functools.cache
def _capped_stream_type() -> type:
    """httpx2's response stream, cut past MAX_ANSWER_BYTES (made on first use: httpx2
    comes with the mcp extra)."""
    import httpx2

    class CappedStream(httpx2.AsyncByteStream):
        def __init__(self, inner, exchanges: _Exchanges) -> None:
            self.inner = inner
            self.exchanges = exchanges

        async def __aiter__(self):
            read = 0
            async for chunk in self.inner:
                read += len(chunk)
                if read > MAX_ANSWER_BYTES:
                    self.exchanges.unusable = True
                    raise AnswerTooLarge(f"more than {MAX_ANSWER_BYTES} bytes")
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    return CappedStream


def _rpc_method(request) -> str | None:
    try:
        message = json.loads(request.content)
    except (ValueError, TypeError, AttributeError):
        return None
    return message.get("method") if isinstance(message, dict) else None


def _reason(error: BaseException) -> str:
    """The class name of what ended the attempt, looking inside exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return type(error).__name__
