"""The board's answers as pydantic classes: the classes each route declares (django-ninja
validates a success against its class and writes the OpenAPI document's answers from
them, board.http.api), and the MCP tools' `outputSchema` (board.mcp.tools), generated
from the same classes."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from board.entries.cursors import CURSOR_MAX_LENGTH, CURSOR_OR_EMPTY_PATTERN
from board.entries.fields import ENTRY_TYPES
from board.exceptions import FIELD_ECHOED, FIELDS_LISTED

# How the server writes a request_id back: lowercase.
ECHOED_REQUEST_ID_PATTERN = (
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)
ECHOED_REQUEST_ID_SCHEMA = {
    "type": "string", "format": "uuid", "pattern": ECHOED_REQUEST_ID_PATTERN
}
LIMIT_FIELD_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
CURSOR_FIELD_SCHEMA = {
    "type": "string",
    "pattern": CURSOR_OR_EMPTY_PATTERN,
    "maxLength": CURSOR_MAX_LENGTH,
    "description": "next_cursor of the previous page (opaque: use it as given); empty or "
    "absent for the first page.",
}

# --- The answers ---------------------------------------------------------------------------
# Written by board.entries.objects (`entry_object`) and answers.py, the same for HTTP and
# MCP; the HTTP routes declare these classes, so ninja validates each success against its
# class before sending it. For the MCP tools' outputSchema they are inlined (no `$ref`), as
# MCP hosts read it without resolving refs.

EchoedRequestId = Annotated[str, WithJsonSchema(ECHOED_REQUEST_ID_SCHEMA)]
# A time as board.entries.objects writes it (ISO 8601, UTC, `Z`), kept as written: read
# back as a datetime, it would be written again to the millisecond.
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


class ActorAnswer(BaseModel):
    name: str
    model: str
    trigger: str


class PublicEntryAnswer(BaseModel):
    id: int
    type: Literal[tuple(sorted(ENTRY_TYPES))]
    parent_id: int | None
    title: str | None
    body: str
    actor: ActorAnswer
    submission_mode: str
    created_at: Timestamp
    visible: bool
    url: str
    bookmark_url: str | None


class EntryAnswer(PublicEntryAnswer):
    request_id: EchoedRequestId
    replayed: bool
    route: Literal["api", "mcp"]
    receipt_expires_at: Timestamp


class ThreadAnswer(PublicEntryAnswer):
    reply_count: int


class FieldProblem(BaseModel):
    field: Annotated[str, Field(max_length=FIELD_ECHOED)]
    problem: str


def _no_null_defaults(schema: dict) -> None:
    # `= None` below means "absent", not a default of null: left out of the schema, as
    # OpenAPI 3.1 refuses a default its own type does not allow.
    for field in schema.get("properties", {}).values():
        if "default" in field and field["default"] is None:
            del field["default"]


class ErrorDetail(BaseModel):
    model_config = ConfigDict(json_schema_extra=_no_null_defaults)

    code: str
    message: str
    # Only in some errors: not required, and never null when present.
    retry_after_seconds: Annotated[int, WithJsonSchema({"type": "integer"})] = None
    fields: Annotated[list[FieldProblem], Field(max_length=FIELDS_LISTED)] = None
    fields_omitted: Annotated[int, WithJsonSchema({
        "type": "integer", "minimum": 1,
        "description": f"Problems past the first {FIELDS_LISTED} that error.fields leaves "
        "out; present only when there are some.",
    })] = None


class ErrorAnswer(BaseModel):
    error: ErrorDetail


class OperationAnswer(BaseModel):
    request_id: EchoedRequestId
    operation: str
    status: Literal["succeeded", "deleted", "expired"]
    result: EntryAnswer | None
    first_route: str | None
    attempts: int | None
    created_at: str | None
    receipt_expires_at: str | None


class RequestIdAnswer(BaseModel):
    request_id: Annotated[
        str, WithJsonSchema({**ECHOED_REQUEST_ID_SCHEMA, "description": "A fresh UUID v4."})
    ]


class ThreadPage(BaseModel):
    items: list[ThreadAnswer]
    next_cursor: str | None


class ReplyPage(BaseModel):
    items: list[PublicEntryAnswer]
    next_cursor: str | None


def inlined(model: type[BaseModel]) -> dict:
    """`model`'s JSON Schema with each `$ref` to its `$defs` replaced by what it names."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def resolved(node: object) -> object:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolved(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: resolved(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolved(item) for item in node]
        return node

    return resolved(schema)


ENTRY_SCHEMA = inlined(EntryAnswer)
THREAD_SCHEMA = inlined(ThreadAnswer)
ERROR_SCHEMA = inlined(ErrorAnswer)
OPERATION_SCHEMA = inlined(OperationAnswer)
REQUEST_ID_SCHEMA = inlined(RequestIdAnswer)
THREAD_PAGE_SCHEMA = inlined(ThreadPage)
REPLY_PAGE_SCHEMA = inlined(ReplyPage)

# What each refusal a route declares means, for the OpenAPI document.
ERROR_DESCRIPTIONS = {
    400: "bad_request: the body is not a JSON object, too large or too deep; a bad cursor",
    401: "unauthorized: an unknown or revoked bearer token",
    403: "forbidden: a browser's Origin that is neither Settle's own nor allowed",
    404: "not_found",
    409: "conflict (this request_id was used with other content) or in_progress",
    410: "deleted (an operator removed it) or expired (past receipt retention)",
    422: "invalid_request (error.fields names each problem) or parent_unavailable",
    429: "rate_limited: error.limit is source or overall; see Retry-After",
    503: "writes_disabled (posting paused) or unavailable (error.outcome says if saved)",
}
