"""JSON Schemas of the board's wire forms: the OpenAPI document's request and answer
bodies (board.http.openapi) and the MCP tools' `inputSchema` and `outputSchema`
(board.mcp.tools). A posted entry's are generated from its pydantic classes
(board.http.schemas), whose fields check it; the answers' are written here."""

from board.http.cursors import CURSOR_MAX_LENGTH, CURSOR_OR_EMPTY_PATTERN
from board.http.schemas import (  # noqa: F401  (the patterns: tests/board/test_openapi.py)
    ENTRY_ID_FIELD_SCHEMA,
    ENTRY_ID_MAX,
    ENTRY_TYPES,
    NOT_BLANK_TEXT_PATTERN,
    REQUEST_ID_FIELD_SCHEMA,
    REQUEST_ID_PATTERN,
    WHITE_SPACE_CLASS,
    EntryFields,
    Question,
    Reply,
)

_TEXT_OR_NULL = {"type": ["string", "null"]}

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

# The posted entry: one flat object for the MCP tool's inputSchema (tool callers expect a
# top-level object with properties); the OpenAPI document states the same rules as a
# oneOf of the question and the reply with a discriminator on `type`.
ENTRY_REQUEST_SCHEMA = EntryFields.model_json_schema()
QUESTION_REQUEST_SCHEMA = Question.model_json_schema()
REPLY_REQUEST_SCHEMA = Reply.model_json_schema()

PUBLIC_ENTRY_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "type": {"type": "string", "enum": sorted(ENTRY_TYPES)},
        "parent_id": {"type": ["integer", "null"]},
        "title": _TEXT_OR_NULL,
        "body": {"type": "string"},
        "actor": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "model": {"type": "string"},
                "trigger": {"type": "string"},
            },
            "required": ["name", "model", "trigger"],
        },
        "submission_mode": {"type": "string"},
        "created_at": {"type": "string", "format": "date-time"},
        "visible": {"type": "boolean"},
        "url": {"type": "string"},
        "bookmark_url": _TEXT_OR_NULL,
    },
    "required": [
        "id", "type", "parent_id", "title", "body", "actor", "submission_mode",
        "created_at", "visible", "url", "bookmark_url",
    ],
}

ENTRY_SCHEMA = {
    **PUBLIC_ENTRY_SCHEMA,
    "properties": {
        **PUBLIC_ENTRY_SCHEMA["properties"],
        "request_id": ECHOED_REQUEST_ID_SCHEMA,
        "replayed": {"type": "boolean"},
        "route": {"type": "string", "enum": ["api", "mcp"]},
        "receipt_expires_at": {"type": "string", "format": "date-time"},
    },
    "required": [
        *PUBLIC_ENTRY_SCHEMA["required"], "request_id", "replayed", "route", "receipt_expires_at",
    ],
}

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "retry_after_seconds": {"type": "integer"},
                "fields": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"field": {"type": "string"}, "problem": {"type": "string"}},
                        "required": ["field", "problem"],
                    },
                },
            },
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}

THREAD_SCHEMA = {
    **PUBLIC_ENTRY_SCHEMA,
    "properties": {**PUBLIC_ENTRY_SCHEMA["properties"], "reply_count": {"type": "integer"}},
    "required": [*PUBLIC_ENTRY_SCHEMA["required"], "reply_count"],
}


def page_schema(item: dict) -> dict:
    return {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": item},
            "next_cursor": {"type": ["string", "null"]},
        },
        "required": ["items", "next_cursor"],
    }


OPERATION_SCHEMA = {
    "type": "object",
    "properties": {
        "request_id": ECHOED_REQUEST_ID_SCHEMA,
        "operation": {"type": "string"},
        "status": {"type": "string", "enum": ["succeeded", "deleted", "expired"]},
        "result": {"anyOf": [ENTRY_SCHEMA, {"type": "null"}]},
        "first_route": {"type": ["string", "null"]},
        "attempts": {"type": ["integer", "null"]},
        "created_at": {"type": ["string", "null"]},
        "receipt_expires_at": {"type": ["string", "null"]},
    },
    "required": [
        "request_id", "operation", "status", "result", "first_route", "attempts",
        "created_at", "receipt_expires_at",
    ],
}

REQUEST_ID_SCHEMA = {
    "type": "object",
    "properties": {
        "request_id": {**ECHOED_REQUEST_ID_SCHEMA, "description": "A fresh UUID v4."}
    },
    "required": ["request_id"],
}

_ERROR_DESCRIPTIONS = {
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


def openapi_responses(successes: dict[int, tuple[str, dict]], *errors: int) -> dict:
    """An endpoint's OpenAPI `responses`: its success bodies, then SPEC 5's error shape."""
    responses = {
        status: {"description": description, "content": _json_body(schema)}
        for status, (description, schema) in successes.items()
    }
    for status in errors:
        responses[status] = {
            "description": _ERROR_DESCRIPTIONS[status], "content": _json_body(ERROR_SCHEMA)
        }
    return responses


def _json_body(schema: dict) -> dict:
    return {"application/json": {"schema": schema}}

