"""The MCP tool table: each tool checks its arguments like the HTTP endpoint checks its
path and query, runs the same `*_answer` function as that endpoint (board/http/answers.py),
and returns the answer's status and body as `structuredContent = {"http_status", "data",
"retry_after_seconds"}`. So a tool answers exactly what HTTP answers, and a post first
sent over one route replays over the other.

`tools/list` and `tools/call` are served from here; the transport (board/mcp/endpoint.py) turns
`ToolParamsError` into JSON-RPC's -32602.
"""

import functools
import json
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainValidator, WithJsonSchema

from board.entries.fields import EntryFields, RefusedShape, entry_fields_read
from board.entries.problems import field_problem, model_read
from board.exceptions import FIELD_ECHOED, Answer, BadRequest, InvalidRequest, error_answer
from board.http.answers import (
    Sender,
    answers,
    entry_post_answer,
    operation_answer,
    reply_list_answer,
    request_id_answer,
    thread_answer,
    thread_list_answer,
)
from board.http.bodies import check_json_depth
from board.http.json_schemas import (
    ENTRY_SCHEMA,
    ERROR_SCHEMA,
    OPERATION_SCHEMA,
    REPLY_PAGE_SCHEMA,
    REQUEST_ID_SCHEMA,
    THREAD_PAGE_SCHEMA,
    THREAD_SCHEMA,
)
from board.mcp.words import request_id_guide, summary
from board.posting.callers import Caller
from receipts.exceptions import OutcomeUnavailable

log = logging.getLogger(__name__)


# The tool list is the same for every caller; a minute of caching spares a round trip.
LIST_TTL_MS = 60_000
LIST_CACHE_SCOPE = "public"


class ToolParamsError(Exception):
    """`tools/list` or `tools/call` params the protocol refuses (JSON-RPC -32602)."""



@dataclass(frozen=True)
class Calling:
    """Who calls a tool: the request's sender, and the caller the transport's token
    check found, or None for `post_entry`, whose own admission judges the token."""

    sender: Sender
    caller: Caller | None


@dataclass(frozen=True)
class ToolCalled:
    """A `tools/call` result, and the HTTP status its answer carries."""

    status: int
    result: dict


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    summary: str
    # The arguments' class: its generated JSON Schema is the tool's inputSchema.
    arguments: type[BaseModel]
    success_schema: dict
    read_only: bool
    run: Callable[[Calling, dict], Answer]


def tools_list(params: dict, *, modern: bool) -> dict:
    cursor = params.get("cursor")
    if cursor is not None:
        # One page holds every tool, so no cursor this server made can be presented.
        raise ToolParamsError("Invalid params: unknown cursor")
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
        "description": f"{tool.summary}\n\n{request_id_guide()}",
        "inputSchema": _input_schema(tool.arguments),
        "outputSchema": _output_schema(tool.success_schema),
        "annotations": annotations,
    }


@functools.cache
def _input_schema(arguments: type[BaseModel]) -> dict:
    return arguments.model_json_schema()


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


def tools_call(calling: Calling, params: dict) -> ToolCalled:
    name = params.get("name")
    if not isinstance(name, str):
        raise ToolParamsError('Invalid params: "name" must be a string')
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolParamsError(f"Unknown tool: {name[:FIELD_ECHOED]}")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolParamsError('Invalid params: "arguments" must be an object')
    try:
        answer = tool.run(calling, arguments)
    except Exception as error:
        # Known refusals and database faults are answers already; this is a bug. Say so
        # truthfully: a read wrote nothing, a post may or may not have been saved.
        # Not silent: logged as an error with where it was raised (never its text, which
        # may quote the request), and the protocol tests fail on this answer.
        log.error("mcp tool %s failed with %s at %s", tool.name, type(error).__name__,
                  raised_at(error))
        outcome = OutcomeUnavailable.NOT_COMMITTED if tool.read_only else OutcomeUnavailable.UNKNOWN
        answer = error_answer(OutcomeUnavailable(outcome=outcome))
    structured = {
        "http_status": answer.status,
        "data": answer.body,
        "retry_after_seconds": answer.retry_after,
    }
    return ToolCalled(status=answer.status, result={
        "content": [
            {"type": "text", "text": summary(tool.name, answer)},
            {"type": "text", "text": json.dumps(_text_copy(structured), ensure_ascii=False)},
        ],
        "structuredContent": structured,
        "isError": answer.status >= 400,
    })


def _text_copy(structured: dict) -> dict:
    """structuredContent as the text content repeats it, for hosts that show a model only
    text: all of it but a refusal's `error.fields`, which structuredContent alone carries
    (its first problem is in the message), so the result holds the list once and stays
    within SPEC 11.6's 16 KiB."""
    error = structured["data"].get("error")
    if not isinstance(error, dict) or "fields" not in error:
        return structured
    error = {name: value for name, value in error.items() if name != "fields"}
    return {**structured, "data": {**structured["data"], "error": error}}


# --- Tool arguments: checked like the HTTP endpoint checks its path and query -----------


def _argument(kind: type, *, required: bool = False, **schema: object) -> Any:
    """An argument of JSON type `kind` (a bool is no integer), null when absent unless
    `required`, documented by `schema`."""
    said = "must be an integer" if kind is int else "must be a string"

    def read(value: object) -> object:
        if value is None:
            if required:
                raise field_problem("required")
            return None
        if isinstance(value, bool) or not isinstance(value, kind):
            raise field_problem(said)
        return value

    return Annotated[kind | None, PlainValidator(read), WithJsonSchema(schema)]


_Cursor = _argument(
    str, type=["string", "null"],
    description="next_cursor from the previous page; omit for the first page.",
)
_Limit = _argument(
    int, type=["integer", "null"], minimum=1, maximum=100,
    description="Items a page, 1 to 100; 50 when omitted.",
)
_QuestionId = _argument(int, required=True, type="integer", description="The question's id.")
_ARGUMENTS = ConfigDict(extra="forbid")


class NoArguments(BaseModel):
    model_config = _ARGUMENTS


class OperationArguments(BaseModel):
    model_config = _ARGUMENTS

    # Read by operation_answer, as the HTTP endpoint reads its path: required, a UUID.
    request_id: Annotated[object, WithJsonSchema(
        {"type": "string", "format": "uuid", "description": "The request_id you kept."}
    )]


class ThreadsArguments(BaseModel):
    model_config = _ARGUMENTS

    cursor: _Cursor = None
    limit: _Limit = None


class ThreadArguments(BaseModel):
    model_config = _ARGUMENTS

    id: _QuestionId


class RepliesArguments(BaseModel):
    model_config = _ARGUMENTS

    thread_id: _QuestionId
    cursor: _Cursor = None
    limit: _Limit = None


def _arguments(model: type[BaseModel], arguments: dict) -> Any:
    """The arguments read by their class, or refused as HTTP would: 422 invalid_request."""
    return model_read(model, arguments, list(model.model_fields))


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)


@answers
def _run_new_request_id(calling: Calling, arguments: dict) -> Answer:
    _arguments(NoArguments, arguments)
    return request_id_answer(caller=calling.caller)


def _run_post_entry(calling: Calling, arguments: dict) -> Answer:
    # The arguments are the HTTP body, already decoded: read exactly as a posted body is
    # (its depth, then its fields), and "mcp" recorded as the route of a first attempt.
    # The post judges the token as HTTP does, before the shape; a 401 may be the
    # transport's to answer (board/mcp/endpoint.py `_serve`).
    try:
        fields = entry_fields_read(check_json_depth(arguments))
    except (BadRequest, InvalidRequest) as error:
        fields = RefusedShape(error=error, request_id=arguments.get("request_id"))
    return entry_post_answer(
        token=calling.sender.token,
        address=calling.sender.address,
        fields=fields,
        route="mcp",
        base=calling.sender.base,
    )


@answers
def _run_get_operation(calling: Calling, arguments: dict) -> Answer:
    # The request_id's own checks (required, a UUID v4 or v7) are the HTTP endpoint's.
    read = _arguments(OperationArguments, arguments)
    return operation_answer(
        caller=calling.caller,
        request_id=read.request_id,
        base=calling.sender.base,
    )


@answers
def _run_list_threads(calling: Calling, arguments: dict) -> Answer:
    read = _arguments(ThreadsArguments, arguments)
    return thread_list_answer(
        caller=calling.caller,
        cursor=read.cursor,
        limit=_text_or_none(read.limit),
        base=calling.sender.base,
    )


@answers
def _run_get_thread(calling: Calling, arguments: dict) -> Answer:
    read = _arguments(ThreadArguments, arguments)
    return thread_answer(
        caller=calling.caller,
        thread_id=str(read.id),
        base=calling.sender.base,
    )


@answers
def _run_list_replies(calling: Calling, arguments: dict) -> Answer:
    read = _arguments(RepliesArguments, arguments)
    return reply_list_answer(
        caller=calling.caller,
        thread_id=str(read.thread_id),
        cursor=read.cursor,
        limit=_text_or_none(read.limit),
        base=calling.sender.base,
    )


# --- Tool table ---------------------------------------------------------------------------

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
            arguments=NoArguments,
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
            arguments=EntryFields,
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
            arguments=OperationArguments,
            success_schema=OPERATION_SCHEMA,
            read_only=True,
            run=_run_get_operation,
        ),
        Tool(
            name="list_threads",
            title="List questions",
            summary="List public questions, newest first, a page at a time (next_cursor).",
            arguments=ThreadsArguments,
            success_schema=THREAD_PAGE_SCHEMA,
            read_only=True,
            run=_run_list_threads,
        ),
        Tool(
            name="get_thread",
            title="Read a question",
            summary="Read one public question, with its count of public replies.",
            arguments=ThreadArguments,
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
            arguments=RepliesArguments,
            success_schema=REPLY_PAGE_SCHEMA,
            read_only=True,
            run=_run_list_replies,
        ),
    ]
}




def raised_at(error: BaseException) -> str:
    """`file:line in function` of the innermost frame: where a bug is, without its text."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "unknown"
    frame = frames[-1]
    return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} in {frame.name}"
