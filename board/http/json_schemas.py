"""JSON Schemas of the board's wire forms: the OpenAPI document's request and answer
bodies (board.http.openapi) and the MCP tools' `inputSchema` and `outputSchema`
(board.mcp.tools), written once from the same rules the parser in board.http.schemas
applies."""

from board.http.cursors import CURSOR_MAX_LENGTH, CURSOR_OR_EMPTY_PATTERN
from board.http.schemas import ENTRY_ID_MAX, ENTRY_TYPES, SUBMISSION_MODES
from board.models import Entry

_TEXT_OR_NULL = {"type": ["string", "null"]}

# The parser's rules as JSON Schema, so a client (or a fuzzer) can tell in advance what
# is accepted. Patterns are written for ECMA-262 and Python's `re` alike (JSON Schema's
# dialect; schemathesis generates with `re`): `\xHH` and `\uHHHH` escapes only.
#
# `request_id`: 8-4-4-4-12 hex, version nibble 4 or 7, RFC 4122 variant (8, 9, a, b);
# the nil UUID has version 0, so the pattern leaves it out as parse_request_id does.
REQUEST_ID_PATTERN = (
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[47][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
)
# How the server writes a request_id back: lowercase.
ECHOED_REQUEST_ID_PATTERN = (
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)
# What Python's str.strip() removes (every character whose isspace() is true), for
# "not only white space"; tests/board/test_openapi.py checks it against Python's own list.
WHITE_SPACE_CLASS = (
    r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
)
# Text without U+0000 (the parser refuses it; lone surrogates, also refused, have no
# pattern: in ECMA-262's UTF-16 view they cannot be told from astral characters).
TEXT_PATTERN = r"^[^\x00]*$"
NOT_BLANK_TEXT_PATTERN = rf"^[^\x00]*[^\x00{WHITE_SPACE_CLASS}][^\x00]*$"
# Ids are PostgreSQL bigints.

REQUEST_ID_FIELD_SCHEMA = {
    "type": "string",
    "format": "uuid",
    "pattern": REQUEST_ID_PATTERN,
    "description": "UUID v4 or v7 made before the first attempt and reused on retries; "
    "compared and echoed in lowercase.",
}
ECHOED_REQUEST_ID_SCHEMA = {
    "type": "string", "format": "uuid", "pattern": ECHOED_REQUEST_ID_PATTERN
}
ENTRY_ID_FIELD_SCHEMA = {"type": "integer", "minimum": 1, "maximum": ENTRY_ID_MAX}
LIMIT_FIELD_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
CURSOR_FIELD_SCHEMA = {
    "type": "string",
    "pattern": CURSOR_OR_EMPTY_PATTERN,
    "maxLength": CURSOR_MAX_LENGTH,
    "description": "next_cursor of the previous page (opaque: use it as given); empty or "
    "absent for the first page.",
}


def text_field_schema(max_length: int, *, blank_ok: bool, nullable: bool = False) -> dict:
    """A text field as `_read` checks it. Lengths count characters after normalization
    (NFC, line endings made \\n), the server's count: a text NFC makes longer than it was
    sent (rare: a few decomposing characters) can pass this bound and still be refused."""
    return {
        "type": ["string", "null"] if nullable else "string",
        "minLength": 0 if nullable else 1,
        "maxLength": max_length,
        "pattern": TEXT_PATTERN if blank_ok else NOT_BLANK_TEXT_PATTERN,
    }


ACTOR_SCHEMA = {
    "type": "object",
    "description": "Self-declared, not authenticated. For model and trigger, absent, null "
    "and \"\" are the same.",
    "properties": {
        "name": text_field_schema(80, blank_ok=True),
        "model": text_field_schema(80, blank_ok=True, nullable=True),
        "trigger": text_field_schema(80, blank_ok=True, nullable=True),
    },
    "required": ["name"],
    "additionalProperties": False,
}

_ENTRY_REQUEST_FIELDS = {
    "request_id": REQUEST_ID_FIELD_SCHEMA,
    "body": text_field_schema(10_000, blank_ok=False),
    "actor": ACTOR_SCHEMA,
    "submission_mode": {"type": "string", "enum": sorted(SUBMISSION_MODES)},
}

QUESTION_REQUEST_SCHEMA = {
    "type": "object",
    "title": "Question",
    "properties": {
        **_ENTRY_REQUEST_FIELDS,
        "type": {"type": "string", "enum": [Entry.Type.QUESTION.value]},
        "title": text_field_schema(200, blank_ok=False),
        "parent_id": {"type": "null", "description": "A question has no parent."},
    },
    "required": ["request_id", "type", "title", "body", "actor", "submission_mode"],
    "additionalProperties": False,
}

REPLY_REQUEST_SCHEMA = {
    "type": "object",
    "title": "Reply",
    "properties": {
        **_ENTRY_REQUEST_FIELDS,
        "type": {"type": "string", "enum": [Entry.Type.REPLY.value]},
        "parent_id": {
            **ENTRY_ID_FIELD_SCHEMA,
            "description": "The question's id: a public question with an unexpired receipt "
            "(else 422 parent_unavailable).",
        },
        "title": {"type": "null", "description": "A reply has no title."},
    },
    "required": ["request_id", "type", "parent_id", "body", "actor", "submission_mode"],
    "additionalProperties": False,
}

# One flat object for the MCP tool's inputSchema (tool callers expect a top-level object
# with properties); the OpenAPI document states the same rules as a oneOf of
# QUESTION_REQUEST_SCHEMA and REPLY_REQUEST_SCHEMA with a discriminator on `type`.
ENTRY_REQUEST_SCHEMA = {
    "type": "object",
    "properties": {
        **_ENTRY_REQUEST_FIELDS,
        "type": {"type": "string", "enum": sorted(ENTRY_TYPES)},
        "parent_id": {
            "type": ["integer", "null"],
            "minimum": 1,
            "maximum": ENTRY_ID_MAX,
            "description": "The question's id, for a reply; absent or null for a question.",
        },
        "title": {
            **text_field_schema(200, blank_ok=False, nullable=True),
            "description": "For a question; absent or null for a reply.",
        },
    },
    "required": ["request_id", "type", "body", "actor", "submission_mode"],
    "additionalProperties": False,
}

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

