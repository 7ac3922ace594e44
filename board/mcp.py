"""The MCP endpoint (`/mcp`, SPEC 6): the board's calls as tools an agent can call.

Design note. This module only translates. Every tool runs the same `*_answer` function
as its HTTP endpoint in `board/api.py` (which calls the same service or selector and maps
refusals through the one `error_answer`), and returns that answer's status and body as
`structuredContent = {"http_status", "data", "retry_after_seconds"}`. So a tool answers
exactly what HTTP answers, and a post first sent over one route replays over the other.

Transport: Streamable HTTP, stateless, JSON responses only, as a dual-era server.
- A request carrying the modern `_meta` (or any non-legacy `MCP-Protocol-Version`) is
  served under `2026-07-28`: no handshake, `server/discover`, the version in every
  request's `_meta` and header, `Mcp-Method`/`Mcp-Name` checked against the body,
  `resultType` on every result and the caching fields on `tools/list` and discover.
- `initialize` selects a legacy revision (`2025-11-25` or `2025-06-18`); later legacy
  requests carry that version in `MCP-Protocol-Version` and a plain body. No session id
  is ever minted: every POST stands alone, so any worker process can serve it.

Order of checks on a POST, each refusal storing nothing: Origin (403), bearer token (401
with `WWW-Authenticate: Bearer`, before anything is parsed), content type and size, JSON
(-32700), one JSON-RPC message (-32600), era and headers (-32020, -32022, -32602), method
(-32601), then the tool, whose own refusals are tool results, never protocol errors.

The `request_id` of a write is a tool argument. JSON-RPC ids are per connection and are
only echoed back, with their JSON type kept (`0` and `"0"` are different ids).
"""

import base64
import binascii
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI

from board.answers import (
    answers,
    base_url,
    entry_post_answer,
    operation_answer,
    reply_list_answer,
    request_address,
    request_id_answer,
    request_token,
    thread_answer,
    thread_list_answer,
)
from board.exceptions import Answer, InvalidRequest, Unauthorized, error_answer
from board.schemas import (
    ENTRY_REQUEST_SCHEMA,
    ENTRY_SCHEMA,
    ERROR_SCHEMA,
    OPERATION_SCHEMA,
    PUBLIC_ENTRY_SCHEMA,
    REQUEST_ID_SCHEMA,
    THREAD_SCHEMA,
    page_schema,
)
from board.services import caller_admit
from receipts.exceptions import OutcomeUnavailable

log = logging.getLogger(__name__)

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")  # newest first: the answer to an unknown one
SUPPORTED_VERSIONS = [MODERN_VERSION, *LEGACY_VERSIONS]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

SERVER_INFO = {"name": "settle", "title": "Settle", "version": "0.1.0"}
# The tool list is the same for every caller; a minute of caching spares a round trip.
LIST_TTL_MS = 60_000
LIST_CACHE_SCOPE = "public"

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
        log.error("mcp request failed with %s", type(error).__name__)
        return _rpc_error(None, INTERNAL_ERROR, "internal error; nothing is known of this call",
                          status=200)


# --- JSON-RPC over HTTP -------------------------------------------------------------------


class ProtocolError(Exception):
    def __init__(self, code: int, message: str, *, data: object = None, status: int = 400):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.status = status


def _json(payload: dict, *, status: int = 200, headers: dict | None = None) -> HttpResponse:
    response = HttpResponse(
        json.dumps(payload, ensure_ascii=False), status=status, content_type="application/json"
    )
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


def _serve(request: HttpRequest) -> HttpResponse:
    origin = request.headers.get("Origin")
    if origin is not None and origin not in settings.SETTLE_MCP_ALLOWED_ORIGINS:
        # DNS rebinding: a browser page may not drive this endpoint from another origin.
        return _rpc_error(None, INVALID_REQUEST, "this Origin may not call /mcp", status=403)

    try:
        # Once a request: the tools read `request.caller`, as views read `request.user`;
        # the same read brings the posting policy, so post_entry reads nothing again.
        request.admission = caller_admit(
            token=request_token(request), address=request_address(request)
        )
        request.caller = request.admission.caller
    except Unauthorized as error:
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

    content_type = request.headers.get("Content-Type", "")
    if content_type and not content_type.lower().startswith("application/json"):
        return _rpc_error(None, INVALID_REQUEST, "the body must be application/json", status=415)
    if not _accepts_json(request.headers.get("Accept")):
        return _rpc_error(None, INVALID_REQUEST, "Accept must allow application/json", status=406)
    length = request.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > settings.SETTLE_MAX_BODY_BYTES:
        return _too_large()
    try:
        raw = request.body
    except Exception:  # RequestDataTooBig, or a client that hung up mid-body
        return _too_large()
    if len(raw) > settings.SETTLE_MAX_BODY_BYTES:
        return _too_large()

    try:
        message = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _rpc_error(None, PARSE_ERROR, "Parse error: the body is not JSON", status=400)

    try:
        return _dispatch(request, message)
    except ProtocolError as error:
        rpc_id = message.get("id") if isinstance(message, dict) else None
        if not _valid_id(rpc_id):
            rpc_id = None
        return _rpc_error(rpc_id, error.code, error.message, data=error.data, status=error.status)


def _too_large() -> HttpResponse:
    limit = settings.SETTLE_MAX_BODY_BYTES // 1024
    return _rpc_error(None, INVALID_REQUEST, f"the body is over {limit} KiB", status=413)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _accepts_json(accept: str | None) -> bool:
    if not accept:
        return True
    kinds = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(kinds & {"application/json", "application/*", "*/*"})


def _valid_id(rpc_id: object) -> bool:
    return isinstance(rpc_id, str) or (isinstance(rpc_id, int) and not isinstance(rpc_id, bool))


def _dispatch(request: HttpRequest, message: object) -> HttpResponse:
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
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "id" must be a string or integer')
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
        return _legacy(request, rpc_id, method, params)
    return _modern(request, rpc_id, method, params, header_version)


def _unsupported(requested: str) -> ProtocolError:
    return ProtocolError(
        UNSUPPORTED_VERSION,
        "Unsupported protocol version",
        data={"supported": SUPPORTED_VERSIONS, "requested": requested},
    )


# --- The modern era (2026-07-28) ----------------------------------------------------------


def _modern(
    request: HttpRequest, rpc_id: object, method: str, params: dict, header_version: str | None
) -> HttpResponse:
    try:
        _modern_check(request, method, params, header_version)
        if method == "server/discover":
            result = _discover()
        elif method == "tools/list":
            result = _tools_list(params, modern=True)
        elif method == "tools/call":
            result = _tools_call(request, params)
        else:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
    except ProtocolError as error:
        status = MODERN_ERROR_STATUS.get(error.code, 200)
        return _rpc_error(rpc_id, error.code, error.message, data=error.data, status=status)
    result = {"resultType": "complete", **result}
    result["_meta"] = {**result.get("_meta", {}), META_SERVER_INFO: SERVER_INFO}
    return _json({"jsonrpc": "2.0", "id": rpc_id, "result": result})


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
            f"MCP-Protocol-Version header {header_version!r} does not match "
            f"_meta version {meta[META_VERSION]!r}"
        )
    if header_version != MODERN_VERSION:
        # A legacy version is spoken after initialize, never with per-request _meta.
        raise _unsupported(header_version)
    header_method = request.headers.get("Mcp-Method")
    if header_method is None:
        raise _mismatch("the Mcp-Method header is required")
    if header_method != method:
        raise _mismatch(f"Mcp-Method header {header_method!r} does not match body {method!r}")
    if method in NAME_BEARING:
        body_name = params.get(NAME_BEARING[method])
        header_name = request.headers.get("Mcp-Name")
        if header_name is None:
            raise _mismatch("the Mcp-Name header is required for " + method)
        decoded = _decode_header(header_name)
        if decoded is None or decoded != body_name:
            raise _mismatch(f"Mcp-Name header {header_name!r} does not match the body")


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
        "instructions": _instructions(),
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
        "instructions": _instructions(),
    }


def _legacy(request: HttpRequest, rpc_id: object, method: str, params: dict) -> HttpResponse:
    try:
        if method == "ping":
            result: dict = {}
        elif method == "tools/list":
            result = _tools_list(params, modern=False)
        elif method == "tools/call":
            result = _tools_call(request, params)
        else:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
    except ProtocolError as error:
        return _rpc_error(rpc_id, error.code, error.message, data=error.data, status=200)
    return _json({"jsonrpc": "2.0", "id": rpc_id, "result": result})


# --- Tools --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    summary: str
    input_schema: dict
    success_schema: dict
    read_only: bool
    run: Callable[[HttpRequest, dict], Answer]


def _tools_list(params: dict, *, modern: bool) -> dict:
    cursor = params.get("cursor")
    if cursor is not None:
        # One page holds every tool, so no cursor this server made can be presented.
        raise ProtocolError(INVALID_PARAMS, "Invalid params: unknown cursor")
    result: dict = {"tools": [_tool_definition(tool) for tool in TOOLS.values()]}
    if modern:
        result.update(ttlMs=LIST_TTL_MS, cacheScope=LIST_CACHE_SCOPE)
    return result


def _tool_definition(tool: Tool) -> dict:
    annotations = {"title": tool.title, "readOnlyHint": tool.read_only, "openWorldHint": False}
    if not tool.read_only:
        annotations.update(destructiveHint=False, idempotentHint=True)
    return {
        "name": tool.name,
        "title": tool.title,
        "description": f"{tool.summary}\n\n{_request_id_guide()}",
        "inputSchema": tool.input_schema,
        "outputSchema": _output_schema(tool.success_schema),
        "annotations": annotations,
    }


def _output_schema(success: dict) -> dict:
    return {
        "type": "object",
        "properties": {
            "http_status": {
                "type": "integer",
                "description": "The status the HTTP API answers for the same call.",
            },
            "data": {
                "description": "The HTTP API's JSON body: the result, or {error: {...}}.",
                "anyOf": [success, ERROR_SCHEMA],
            },
            "retry_after_seconds": {
                "type": ["integer", "null"],
                "description": "How long to wait before retrying, when the answer says to.",
            },
        },
        "required": ["http_status", "data", "retry_after_seconds"],
        "additionalProperties": False,
    }


def _tools_call(request: HttpRequest, params: dict) -> dict:
    name = params.get("name")
    if not isinstance(name, str):
        raise ProtocolError(INVALID_PARAMS, 'Invalid params: "name" must be a string')
    tool = TOOLS.get(name)
    if tool is None:
        raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ProtocolError(INVALID_PARAMS, 'Invalid params: "arguments" must be an object')
    try:
        answer = tool.run(request, arguments)
    except Exception as error:
        # Known refusals and database faults are answers already; this is a bug. Say so
        # truthfully: a read wrote nothing, a post may or may not have been saved.
        log.error("mcp tool %s failed with %s", tool.name, type(error).__name__)
        outcome = OutcomeUnavailable.NOT_COMMITTED if tool.read_only else OutcomeUnavailable.UNKNOWN
        answer = error_answer(OutcomeUnavailable(outcome=outcome))
    structured = {
        "http_status": answer.status,
        "data": answer.body,
        "retry_after_seconds": answer.retry_after,
    }
    return {
        "content": [
            {"type": "text", "text": _summary(tool.name, answer)},
            {"type": "text", "text": json.dumps(structured, ensure_ascii=False)},
        ],
        "structuredContent": structured,
        "isError": answer.status >= 400,
    }


# --- Tool arguments: checked like the HTTP endpoint checks its path and query -----------


def _check_arguments(arguments: dict, allowed: dict[str, tuple[str, bool]]) -> None:
    """Refuse unknown, missing or mistyped arguments as HTTP would: 422 invalid_request."""
    problems = [
        {"field": name, "problem": "unknown field"} for name in sorted(arguments.keys() - allowed)
    ]
    for name, (kind, required) in allowed.items():
        value = arguments.get(name)
        if value is None:
            if required:
                problems.append({"field": name, "problem": "required"})
        elif kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append({"field": name, "problem": "must be an integer"})
        elif kind == "string" and not isinstance(value, str):
            problems.append({"field": name, "problem": "must be a string"})
    if problems:
        raise InvalidRequest(problems)


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)




@answers
def _run_new_request_id(request: HttpRequest, arguments: dict) -> Answer:
    _check_arguments(arguments, {})
    return request_id_answer(caller=request.caller)


def _run_post_entry(request: HttpRequest, arguments: dict) -> Answer:
    # The arguments are the HTTP body, already decoded: entry_post checks them exactly
    # as it checks a posted body, and records "mcp" as the route of a first attempt.
    # The transport has already checked the token: its caller and policy are passed on.
    return entry_post_answer(
        token=None,
        address=request_address(request),
        body=arguments,
        header_key=None,
        route="mcp",
        base=base_url(request),
        admission=request.admission,
    )


@answers
def _run_get_operation(request: HttpRequest, arguments: dict) -> Answer:
    # The request_id's own checks (required, a UUID v4 or v7) are the HTTP endpoint's.
    _check_arguments(arguments, {"request_id": ("any", False)})
    return operation_answer(
        caller=request.caller,
        request_id=arguments.get("request_id"),
        base=base_url(request),
    )


_PAGE_ARGUMENTS = {"cursor": ("string", False), "limit": ("integer", False)}


@answers
def _run_list_threads(request: HttpRequest, arguments: dict) -> Answer:
    _check_arguments(arguments, _PAGE_ARGUMENTS)
    return thread_list_answer(
        caller=request.caller,
        cursor=arguments.get("cursor"),
        limit=_text_or_none(arguments.get("limit")),
        base=base_url(request),
    )


@answers
def _run_get_thread(request: HttpRequest, arguments: dict) -> Answer:
    _check_arguments(arguments, {"id": ("integer", True)})
    return thread_answer(
        caller=request.caller,
        thread_id=str(arguments["id"]),
        base=base_url(request),
    )


@answers
def _run_list_replies(request: HttpRequest, arguments: dict) -> Answer:
    _check_arguments(arguments, {"thread_id": ("integer", True), **_PAGE_ARGUMENTS})
    return reply_list_answer(
        caller=request.caller,
        thread_id=str(arguments["thread_id"]),
        cursor=arguments.get("cursor"),
        limit=_text_or_none(arguments.get("limit")),
        base=base_url(request),
    )


# --- Tool table ---------------------------------------------------------------------------

_NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}
_CURSOR = {
    "type": ["string", "null"],
    "description": "next_cursor from the previous page; omit for the first page.",
}
_LIMIT = {
    "type": ["integer", "null"],
    "minimum": 1,
    "maximum": 100,
    "description": "Items a page, 1 to 100; 50 when omitted.",
}
_UUID = {"type": "string", "format": "uuid", "description": "The request_id you kept."}

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in [
        Tool(
            name="new_request_id",
            title="Make a request_id",
            summary=(
                "Make a fresh request_id (a UUID v4) for ONE new post. Call it once per "
                "intended post, before the first attempt, and keep the id with the post's "
                "content until the outcome is settled. Writes nothing."
            ),
            input_schema=_NO_ARGUMENTS,
            success_schema=REQUEST_ID_SCHEMA,
            read_only=True,
            run=_run_new_request_id,
        ),
        Tool(
            name="post_entry",
            title="Post a question or reply",
            summary=(
                "Post a question (type 'question', with title) or a reply (type 'reply', "
                "with parent_id). Idempotent only for the same request_id AND the same "
                "content: a call repeated with both unchanged saves nothing new and answers "
                "http_status 200 with replayed true and the entry saved first; the same "
                "request_id with different content is refused with 409 conflict. "
                "http_status 201 means it was saved now."
            ),
            input_schema=ENTRY_REQUEST_SCHEMA,
            success_schema=ENTRY_SCHEMA,
            read_only=False,
            run=_run_post_entry,
        ),
        Tool(
            name="get_operation",
            title="Look up a post's outcome",
            summary=(
                "Look up what became of one of YOUR posts by its request_id, without "
                "writing anything: status succeeded (result is the entry), deleted or "
                "expired; http_status 404 means nothing was saved under this id for you "
                "(or it is older than tombstone retention)."
            ),
            input_schema={
                "type": "object",
                "properties": {"request_id": _UUID},
                "required": ["request_id"],
                "additionalProperties": False,
            },
            success_schema=OPERATION_SCHEMA,
            read_only=True,
            run=_run_get_operation,
        ),
        Tool(
            name="list_threads",
            title="List questions",
            summary="List public questions, newest first, a page at a time (next_cursor).",
            input_schema={
                "type": "object",
                "properties": {"cursor": _CURSOR, "limit": _LIMIT},
                "additionalProperties": False,
            },
            success_schema=page_schema(THREAD_SCHEMA),
            read_only=True,
            run=_run_list_threads,
        ),
        Tool(
            name="get_thread",
            title="Read a question",
            summary="Read one public question, with its count of public replies.",
            input_schema={
                "type": "object",
                "properties": {"id": {"type": "integer", "description": "The question's id."}},
                "required": ["id"],
                "additionalProperties": False,
            },
            success_schema=THREAD_SCHEMA,
            read_only=True,
            run=_run_get_thread,
        ),
        Tool(
            name="list_replies",
            title="List a question's replies",
            summary=(
                "List a public question's public replies, oldest first, a page at a time "
                "(next_cursor). A reply's bookmark_url opens the page that starts with it."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "thread_id": {"type": "integer", "description": "The question's id."},
                    "cursor": _CURSOR,
                    "limit": _LIMIT,
                },
                "required": ["thread_id"],
                "additionalProperties": False,
            },
            success_schema=page_schema(PUBLIC_ENTRY_SCHEMA),
            read_only=True,
            run=_run_list_replies,
        ),
    ]
}


# --- Words for the agent ------------------------------------------------------------------


def _duration(period: timedelta) -> str:
    seconds = int(period.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


def _request_id_guide() -> str:
    retention = _duration(settings.SETTLE_ENTRY_RETENTION)
    return (
        "request_id rules: make a NEW request_id (new_request_id) for each new post you "
        "intend, before its first attempt, and keep it. A retry of that post (after a "
        "timeout, a lost answer, 429, 503 or 409 in_progress) MUST reuse the same "
        "request_id with exactly the same content; never make a new id for a retry, or the "
        f"post may be saved twice. A request_id stays valid for {retention} after its entry "
        "was saved (receipt_expires_at): until then a retry replays the saved entry; after "
        "it, a retry answers 410 expired. If an outcome is uncertain (no answer, or 503 with "
        "outcome 'unknown'), call get_operation with the request_id, or post_entry again "
        "with the same request_id and content; report the post as unconfirmed until one of "
        "them settles it."
    )


def _instructions() -> str:
    return (
        "Settle is a question-and-answer board whose writes are safely retryable. To post: "
        "new_request_id, keep the id, post_entry; if the answer is lost, post_entry again "
        "with the same request_id and content, or get_operation; report the post as "
        "unconfirmed until one of them settles it. " + _request_id_guide()
    )


def _summary(tool: str, answer: Answer) -> str:
    """One short sentence: what happened and what to do next."""
    data = answer.body
    if answer.status >= 400:
        return _error_summary(tool, answer)
    if tool == "post_entry":
        what = f"{data['type']} {data['id']} (request_id {data['request_id']})"
        if data["replayed"]:
            return (
                f"Already saved earlier: this retry returned the same {what}; nothing new "
                "was written. The post is confirmed; do not post it again."
            )
        return f"Saved {what} now. The post is confirmed; do not post it again."
    if tool == "new_request_id":
        return (
            f"New request_id {data['request_id']}. Keep it with the content of this one "
            "post and reuse both, unchanged, on every retry."
        )
    if tool == "get_operation":
        status = data["status"]
        if status == "succeeded":
            return (
                f"Confirmed: request {data['request_id']} saved entry {data['result']['id']}. "
                "Do not post it again."
            )
        if status == "deleted":
            return "Saved once, then deleted by an operator; it will not be recreated."
        return (
            "The receipt of this request expired: its outcome can no longer be replayed. "
            "To post again, make a new request_id."
        )
    if "items" in data:
        more = "more with next_cursor" if data["next_cursor"] else "no more pages"
        return f"{len(data['items'])} item(s); {more}."
    return f"Question {data['id']} with {data['reply_count']} public reply(ies)."


def _error_summary(tool: str, answer: Answer) -> str:
    error = answer.body["error"]
    code, message = error["code"], error["message"]
    wait = answer.retry_after
    same = "retry with the same request_id and the same content"
    advice = {
        "bad_request": "Nothing was saved. Fix the call and send it again.",
        "unauthorized": "Nothing was done. Use a valid bearer token.",
        "not_found": "Nothing matches. Check the id.",
        "conflict": (
            f"Nothing was saved: this request_id was used for different content "
            f"({', '.join(error.get('conflicting_fields', []))}). A retry must resend the "
            "first content unchanged; a different post needs a new request_id."
        ),
        "in_progress": f"Another call with this request_id is being saved: wait {wait}s, "
        f"then {same}, or call get_operation.",
        "deleted": "An operator deleted this entry; do not retry it, it will not be recreated.",
        "expired": "Its outcome can no longer be replayed; to post again, make a new request_id.",
        "invalid_request": (
            "Nothing was saved. Fix the arguments named in error.fields and call again; the "
            "same request_id may be reused."
        ),
        "parent_unavailable": "Nothing was saved. Reply to a public, open question.",
        "rate_limited": f"Nothing was saved. Wait {wait}s, then {same}.",
        "writes_disabled": f"Posting is paused; nothing was saved. Wait {wait}s, then {same}.",
    }.get(code, f"Wait {wait}s, then {same}." if wait else "")
    if code == "unavailable":
        if error.get("outcome") == "unknown":
            advice = (
                "The outcome is UNKNOWN: the post may have been saved. Call get_operation with "
                f"this request_id, or {same}; report it as unconfirmed until then."
            )
        else:
            advice = f"Nothing was saved. Wait {wait}s, then {same}."
    return f"HTTP {answer.status} {code}: {message}. {advice}".strip()
