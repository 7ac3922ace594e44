"""The MCP endpoint (`/mcp`, SPEC 6): the board's calls as tools an agent can call.

Design note. This module is the transport only: JSON-RPC over HTTP in both eras. The
tools are board/mcp/tools.py (each runs the same `*_answer` function as its HTTP endpoint,
board/http/answers.py), the words an agent reads are board/mcp/words.py.

Transport: Streamable HTTP, stateless, JSON responses only, as a dual-era server.
- A request carrying the modern `_meta` (or any non-legacy `MCP-Protocol-Version`) is
  served under `2026-07-28`: no handshake, `server/discover`, the version in every
  request's `_meta` and header, `Mcp-Method`/`Mcp-Name` checked against the body,
  `resultType` on every result and the caching fields on `tools/list` and discover.
- `initialize` selects a legacy revision (`2025-11-25` or `2025-06-18`); later legacy
  requests carry that version in `MCP-Protocol-Version` and a plain body. No session id
  is ever minted: every POST stands alone, so any worker process can serve it.

Order of checks on a POST, each refusal storing nothing: Origin (403), bearer token (401
with `WWW-Authenticate: Bearer`, before any refusal of the body), content type and size,
JSON (-32700), one JSON-RPC message (-32600), era and headers (-32020, -32022, -32602),
method (-32601), then the tool, whose own refusals are tool results, never protocol
errors. The body is read and decoded once, before the token check (which must know
whether it asks for `post_entry`), and refused in this order after it.
A `post_entry` call is the one exception in how, not in what: its token is read by the
post's own admission, in the statement that counts it (as over HTTP, where a refused
token counts against the client's address, SPEC 5.1 step 1), and the transport's check
runs only if the call is refused before the tool or by that token check. The answers
are the same but one: a database that cannot be reached is the post's own fault (a
tool result, `503`, `not_committed`, as over HTTP), not the transport's `503`. A post
costs one statement fewer.

The `request_id` of a write is a tool argument. JSON-RPC ids are per connection and are
only echoed back, with their JSON type kept (`0` and `"0"` are different ids).
"""

import base64
import binascii
import json
import logging
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI

from board.exceptions import FIELD_ECHOED, RPC_ID_LONGEST, Unauthorized, error_answer
from board.http.answers import Sender, request_sender, wire_json
from board.mcp.tools import (  # noqa: F401  (TOOLS and _output_schema: the tests' view)
    LIST_CACHE_SCOPE,
    LIST_TTL_MS,
    TOOLS,
    Calling,
    ToolCalled,
    ToolParamsError,
    _output_schema,
    raised_at,
    tools_call,
    tools_list,
)
from board.mcp.words import instructions
from board.posting.callers import Caller, caller_authenticate
from board.serving import metrics
from board.serving.origins import mcp_origin_allowed

log = logging.getLogger(__name__)

T = TypeVar("T")

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")  # newest first: the answer to an unknown one
SUPPORTED_VERSIONS = [MODERN_VERSION, *LEGACY_VERSIONS]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

SERVER_INFO = {"name": "settle", "title": "Settle", "version": "0.1.0"}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022

# The modern era's HTTP status for each JSON-RPC error (streamable-http.mdx); the
# legacy era answers method-level errors with 200, as its servers always have.
MODERN_ERROR_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_VERSION: 400,
}
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


# --- Served by django-ninja beside the API ----------------------------------------------
# A second NinjaAPI, mounted at the site root, owns the one path `/mcp` (no trailing
# slash, so no APPEND_SLASH redirect, which an MCP client would not follow on a POST).
# Its operation takes no parameters, so ninja parses nothing and never answers with its
# own 422: JSON-RPC decides every error itself. Ninja's views are CSRF-exempt and answer
# any method but POST with 405. No docs: the tools describe themselves over MCP.
mcp_api = NinjaAPI(
    title="Settle MCP",
    version="1",
    urls_namespace="mcp",
    docs_url=None,
    openapi_url=None,
)


@mcp_api.post("/mcp", include_in_schema=False)
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    try:
        return _serve(request)
    except Exception as error:  # SPEC 11.5: no input, however malformed, is a 500
        # A bug, not an input: logged as an error with where it was raised (never its
        # text), and tests/board/test_mcp_protocol.py fails on this -32603.
        log.error("mcp request failed with %s at %s", type(error).__name__, raised_at(error))
        return _rpc_error(None, INTERNAL_ERROR, "internal error; nothing is known of this call",
                          status=200)


# --- JSON-RPC over HTTP -------------------------------------------------------------------


class ProtocolError(Exception):
    """A JSON-RPC error, answered with `status` in reply to `rpc_id` (None until the
    message's id is known to be one, and for refusals before the message is read)."""

    def __init__(self, code: int, message: str, *, data: object = None, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status
        self.rpc_id: object = None
        self.placed = False

    def in_reply_to(self, rpc_id: object, *, status: int) -> None:
        """Answer this error to the request `rpc_id`, with its era's status."""
        self.rpc_id, self.status, self.placed = rpc_id, status, True


def _json(payload: dict, *, status: int = 200, headers: dict | None = None) -> HttpResponse:
    # As the API answers (`wire_json`): a client's lone surrogate echoed back (an id, an
    # unknown argument's name) has no UTF-8 form, only an escape.
    response = HttpResponse(wire_json(payload), status=status, content_type="application/json")
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _rpc_error(
    rpc_id: object, code: int, message: str, *, data: object = None, status: int,
    headers: dict | None = None,
) -> HttpResponse:
    error: dict = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _json({"jsonrpc": "2.0", "id": rpc_id, "error": error}, status=status, headers=headers)


def _declared_length(request: HttpRequest) -> int | None:
    """The `Content-Length` as a number, or None when it is absent or not ASCII digits.
    str.isdigit() also takes "²" (which int() refuses) and other scripts' digits; a
    number of thousands of digits is past int()'s limit: any length of more than 18
    digits is read as 10**18, far past every body Settle reads."""
    length = request.headers.get("Content-Length", "")
    if not (length.isascii() and length.isdigit()):
        return None
    return int(length) if len(length) <= 18 else 10**18


# What `_message_read` gives for a body that is not one JSON value: too large to read
# (never read), or not UTF-8 JSON.
_UNREAD = object()
_UNPARSED = object()


def _message_read(request: HttpRequest) -> object:
    """The body's one decoding: its JSON value, or `_UNREAD` or `_UNPARSED`, refused
    later in the order of checks (`_answered`), after the token."""
    limit = settings.SETTLE_MAX_BODY_BYTES
    if (_declared_length(request) or 0) > limit:
        return _UNREAD
    try:
        raw = request.body
    except Exception:  # RequestDataTooBig, or a client that hung up mid-body
        return _UNREAD
    if len(raw) > limit:
        return _UNREAD
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _UNPARSED


def _asks_post_entry(message: object) -> bool:
    """Whether a message, however well formed otherwise, calls `post_entry`."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return False
    params = message.get("params")
    return isinstance(params, dict) and params.get("name") == "post_entry"


def _serve(request: HttpRequest) -> HttpResponse:
    origin = request.headers.get("Origin")
    if origin is not None and not mcp_origin_allowed(origin):
        # DNS rebinding: a browser page may not drive this endpoint from another origin.
        return _rpc_error(None, INVALID_REQUEST, "this Origin may not call /mcp", status=403)
    sender = request_sender(request)
    message = _message_read(request)
    if not _asks_post_entry(message):
        checked = _token_checked(sender, counted_as_post=False)
        if isinstance(checked, HttpResponse):
            return checked
        try:
            return _answered(request, message, Calling(sender=sender, caller=checked))
        except ProtocolError as error:
            return _protocol_error(error)
    # A post reads its caller in its own admission, token first, as over HTTP: the
    # transport's read would be one statement more on every post. The transport still
    # answers `401` before anything else, so its check runs after all, only when the
    # call is refused before the tool ran (not yet counted as a post) or by the post's
    # own token check (counted): an unknown or revoked token is the transport's 401; no
    # token where anonymous posting is off is the tool's.
    try:
        return _answered(request, message, Calling(sender=sender, caller=None))
    except (ProtocolError, PostTokenRefused) as refused:
        before_tool = isinstance(refused, ProtocolError)
        checked = _token_checked(sender, counted_as_post=before_tool)
        if isinstance(checked, HttpResponse):
            return checked
        return _protocol_error(refused) if before_tool else refused.response


class PostTokenRefused(Exception):
    """The post's own admission refused its token (`401`); `response` is its tool result."""

    def __init__(self, response: HttpResponse):
        super().__init__("post_entry answered 401")
        self.response = response


def _token_checked(sender: Sender, *, counted_as_post: bool) -> Caller | HttpResponse:
    """The transport's token check: the caller when the token is good (or absent), else
    the `401` (or `503` when the database cannot tell), counted as a post's answer when
    `counted_as_post` (a `post_entry` call the tool did not answer)."""
    try:
        return caller_authenticate(token=sender.token, address=sender.address)
    except Unauthorized as error:
        if counted_as_post:
            # Refused before any tool runs, yet still a post an operator wants counted.
            metrics.post_answered(route="mcp", answer=error_answer(error))
        return _rpc_error(
            None, INVALID_REQUEST, error.message, status=401,
            headers={"WWW-Authenticate": 'Bearer realm="settle"'},
        )
    except DatabaseError as error:
        log.warning("mcp token check failed with %s", type(error).__name__)
        return _rpc_error(
            None, INTERNAL_ERROR, "the server cannot check tokens now; nothing was done",
            status=503, headers={"Retry-After": "1"},
        )


def _answered(request: HttpRequest, message: object, calling: Calling) -> HttpResponse:
    """Everything after the token: the body's checks (content type, what the client
    accepts, size, JSON, in that order) and the call; a refusal is raised as a
    ProtocolError, placed in reply to the message's id when it has a valid one."""
    content_type = request.headers.get("Content-Type", "")
    if content_type and not content_type.lower().startswith("application/json"):
        raise ProtocolError(INVALID_REQUEST, "the body must be application/json", status=415)
    if not _accepts_json(request.headers.get("Accept")):
        raise ProtocolError(INVALID_REQUEST, "Accept must allow application/json", status=406)
    if message is _UNREAD:
        limit = settings.SETTLE_MAX_BODY_BYTES // 1024
        raise ProtocolError(INVALID_REQUEST, f"the body is over {limit} KiB", status=413)
    if message is _UNPARSED:
        raise ProtocolError(PARSE_ERROR, "Parse error: the body is not JSON", status=400)
    try:
        return _dispatch(request, message, calling)
    except ProtocolError as error:
        if not error.placed:
            rpc_id = message.get("id") if isinstance(message, dict) else None
            error.in_reply_to(rpc_id if _valid_id(rpc_id) else None, status=error.status)
        raise


def _protocol_error(error: ProtocolError) -> HttpResponse:
    return _rpc_error(error.rpc_id, error.code, error.message, data=error.data,
                      status=error.status)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _accepts_json(accept: str | None) -> bool:
    if not accept:
        return True
    kinds = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(kinds & {"application/json", "application/*", "*/*"})


def _valid_id(rpc_id: object) -> bool:
    return type(rpc_id) is int or (isinstance(rpc_id, str) and len(rpc_id) <= RPC_ID_LONGEST)


def _dispatch(request: HttpRequest, message: object, calling: Calling) -> HttpResponse:
    if isinstance(message, list):
        raise ProtocolError(
            INVALID_REQUEST, "Invalid Request: a batch is not accepted; send one message a POST"
        )
    if not isinstance(message, dict):
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: send one JSON-RPC object")
    if message.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if "method" not in message:
        kind = "a response" if "result" in message or "error" in message else "no method"
        raise ProtocolError(INVALID_REQUEST, f"Invalid Request: {kind}; send a request")
    method = message["method"]
    if not isinstance(method, str) or not method:
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "method" must be a string')
    if "id" in message and not _valid_id(message["id"]):
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "id" is no integer or short string')
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ProtocolError(INVALID_PARAMS, 'Invalid params: "params" must be an object')

    header_version = request.headers.get("MCP-Protocol-Version")
    if "id" not in message:
        # A notification: accepted with 202 and no body, nothing done, nothing stored.
        if header_version is not None and header_version not in SUPPORTED_VERSIONS:
            raise _unsupported(header_version)
        return HttpResponse(status=202)

    rpc_id = message["id"]
    meta = params.get("_meta")
    modern_meta = isinstance(meta, dict) and META_VERSION in meta
    if method == "initialize":
        result = _initialize(params)
        return _json({"jsonrpc": "2.0", "id": rpc_id, "result": result})
    if header_version in LEGACY_VERSIONS and not modern_meta:
        return _legacy(calling, rpc_id, method, params)
    return _modern(request, calling, rpc_id, method, params, header_version)


def _unsupported(requested: str) -> ProtocolError:
    return ProtocolError(
        UNSUPPORTED_VERSION,
        "Unsupported protocol version",
        data={"supported": SUPPORTED_VERSIONS, "requested": requested[:FIELD_ECHOED]},
    )


# --- The modern era (2026-07-28) ----------------------------------------------------------


def _modern(
    request: HttpRequest, calling: Calling, rpc_id: object, method: str, params: dict,
    header_version: str | None,
) -> HttpResponse:
    called: ToolCalled | None = None
    try:
        _modern_check(request, method, params, header_version)
        if method == "server/discover":
            result = _discover()
        elif method == "tools/list":
            result = _tools(tools_list, params, modern=True)
        elif method == "tools/call":
            called = _tools(tools_call, calling, params)
            result = called.result
        else:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method[:FIELD_ECHOED]}")
    except ProtocolError as error:
        error.in_reply_to(rpc_id, status=MODERN_ERROR_STATUS.get(error.code, 200))
        raise
    result = {"resultType": "complete", **result}
    result["_meta"] = {**result.get("_meta", {}), META_SERVER_INFO: SERVER_INFO}
    response = _json({"jsonrpc": "2.0", "id": rpc_id, "result": result})
    return _tool_checked(calling, called, response)


def _modern_check(
    request: HttpRequest, method: str, params: dict, header_version: str | None
) -> None:
    """The server validation of streamable-http.mdx: each header present and equal to
    the body, the version supported and carried in `_meta`."""
    if header_version is None:
        raise _mismatch("the MCP-Protocol-Version header is required")
    if header_version not in SUPPORTED_VERSIONS:
        raise _unsupported(header_version)
    meta = params.get("_meta")
    if not isinstance(meta, dict) or not isinstance(meta.get(META_VERSION), str):
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta needs {META_VERSION}")
    if not isinstance(meta.get(META_CAPABILITIES), dict):
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta needs {META_CAPABILITIES}")
    if meta[META_VERSION] != header_version:
        raise _mismatch(
            f"MCP-Protocol-Version header {header_version[:FIELD_ECHOED]!r} does not match "
            f"_meta version {meta[META_VERSION][:FIELD_ECHOED]!r}"
        )
    if header_version != MODERN_VERSION:
        # A legacy version is spoken after initialize, never with per-request _meta.
        raise _unsupported(header_version)
    header_method = request.headers.get("Mcp-Method")
    if header_method is None:
        raise _mismatch("the Mcp-Method header is required")
    if header_method != method:
        raise _mismatch(f"Mcp-Method header {header_method[:FIELD_ECHOED]!r} is not the body's")
    if method in NAME_BEARING:
        body_name = params.get(NAME_BEARING[method])
        header_name = request.headers.get("Mcp-Name")
        if header_name is None:
            raise _mismatch("the Mcp-Name header is required for " + method)
        decoded = _decode_header(header_name)
        if decoded is None or decoded != body_name:
            raise _mismatch(f"Mcp-Name header {header_name[:FIELD_ECHOED]!r} is not the body's")


def _mismatch(message: str) -> ProtocolError:
    return ProtocolError(HEADER_MISMATCH, "Header mismatch: " + message)


def _decode_header(value: str) -> str | None:
    """A header value, undoing the `=?base64?...?=` sentinel encoding."""
    if value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11:
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


def _discover() -> dict:
    return {
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": {"tools": {}},
        "serverInfo": SERVER_INFO,
        "instructions": instructions(),
        "ttlMs": LIST_TTL_MS,
        "cacheScope": LIST_CACHE_SCOPE,
    }


# --- The legacy era (2025-11-25, 2025-06-18), stateless --------------------------------


def _initialize(params: dict) -> dict:
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise ProtocolError(
            INVALID_PARAMS, 'Invalid params: initialize needs "protocolVersion"', status=400
        )
    # Lifecycle: the same version when supported, else the newest legacy one we speak.
    version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": SERVER_INFO,
        "instructions": instructions(),
    }


def _legacy(calling: Calling, rpc_id: object, method: str, params: dict) -> HttpResponse:
    called: ToolCalled | None = None
    try:
        if method == "ping":
            result: dict = {}
        elif method == "tools/list":
            result = _tools(tools_list, params, modern=False)
        elif method == "tools/call":
            called = _tools(tools_call, calling, params)
            result = called.result
        else:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method[:FIELD_ECHOED]}")
    except ProtocolError as error:
        error.in_reply_to(rpc_id, status=200)
        raise
    response = _json({"jsonrpc": "2.0", "id": rpc_id, "result": result})
    return _tool_checked(calling, called, response)


def _tools(handler: Callable[..., T], *args, **kwargs) -> T:
    try:
        return handler(*args, **kwargs)
    except ToolParamsError as error:
        raise ProtocolError(INVALID_PARAMS, str(error)) from None


def _tool_checked(calling: Calling, called: ToolCalled | None, response: HttpResponse):
    """The response, unless it is a post whose own admission refused its token: that
    `401` is the transport's to judge (`_serve`)."""
    if calling.caller is None and called is not None and called.status == 401:
        raise PostTokenRefused(response)
    return response
