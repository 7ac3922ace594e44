"""The OpenAPI document at /api/v1/openapi.json, made to say exactly what the API accepts.

django-ninja writes the document from the endpoints' signatures, which are deliberately
loose (every parameter a string) so that the board's own parsers, not pydantic, decide
and word each refusal (SPEC 5). This module puts the parsers' rules back into the
document: each parameter's type, pattern and bounds, the posted entry as a `oneOf`
question or reply with a discriminator on `type`, that the bearer token is optional, and links
that let a client (or schemathesis' stateful phase) go from what it made to where it can
read it. The rules themselves live next to the parsers (board/http/schemas.py,
board/http/cursors.py); this module only places them in the document.

Operations are found by path and method, which SPEC fixes, and named after the MCP tools
that do the same thing, so the two interfaces share one vocabulary.
"""

from typing import Any

from ninja import NinjaAPI

from board.http.json_schemas import (
    CURSOR_FIELD_SCHEMA,
    ENTRY_ID_FIELD_SCHEMA,
    LIMIT_FIELD_SCHEMA,
    QUESTION_REQUEST_SCHEMA,
    REPLY_REQUEST_SCHEMA,
    REQUEST_ID_FIELD_SCHEMA,
)

COMPONENTS = "#/components/schemas/"

_REQUEST_ID = {
    "in": "path",
    "name": "request_id",
    "required": True,
    "schema": REQUEST_ID_FIELD_SCHEMA,
    "description": "The request_id of one of your own posts.",
}
_THREAD_ID = {
    "in": "path",
    "name": "thread_id",
    "required": True,
    "schema": ENTRY_ID_FIELD_SCHEMA,
    "description": "A public question's id.",
}
_CURSOR = {
    "in": "query",
    "name": "cursor",
    "required": False,
    "schema": CURSOR_FIELD_SCHEMA,
    "allowEmptyValue": True,
    "description": "next_cursor of the previous page; omit it (or leave it empty) for the "
    "first page. A cursor this server did not make is 400 bad_request.",
}
_LIMIT = {
    "in": "query",
    "name": "limit",
    "required": False,
    "schema": LIMIT_FIELD_SCHEMA,
    # `?limit=` is read as no limit given, as browsers' forms send it.
    "allowEmptyValue": True,
    "description": "Items a page, 1 to 100; 50 when omitted or empty.",
}


def _link(operation_id: str, description: str, **parameters: str) -> dict:
    return {"operationId": operation_id, "parameters": parameters, "description": description}


_TO_OPERATION = _link(
    "get_operation",
    "What became of the post with this request_id (a fresh id is 404 until a post uses it).",
    request_id="$response.body#/request_id",
)
_TO_FIRST_THREAD = _link(
    "get_thread", "The first question on this page.", thread_id="$response.body#/items/0/id"
)
_TO_FIRST_THREADS_REPLIES = _link(
    "list_replies",
    "The replies to the first question on this page.",
    thread_id="$response.body#/items/0/id",
)


# What each operation is called, the parameters it reads, and where its answers lead:
# {(path, method): (operationId, parameters, {status: {link name: link}})}.
OPERATIONS: dict[tuple[str, str], tuple[str, list[dict], dict[str, dict[str, dict]]]] = {
    ("/api/v1/entries", "post"): (
        "post_entry",
        [],
        {"201": {"GetOperation": _TO_OPERATION}, "200": {"GetOperation": _TO_OPERATION}},
    ),
    ("/api/v1/request-ids", "post"): (
        "new_request_id",
        [],
        {"201": {"GetOperation": _TO_OPERATION}},
    ),
    ("/api/v1/operations/{request_id}", "get"): ("get_operation", [_REQUEST_ID], {}),
    ("/api/v1/threads", "get"): (
        "list_threads",
        [_CURSOR, _LIMIT],
        {
            "200": {
                "GetThread": _TO_FIRST_THREAD,
                "ListReplies": _TO_FIRST_THREADS_REPLIES,
                "NextPage": _link(
                    "list_threads", "The next page.", cursor="$response.body#/next_cursor"
                ),
            }
        },
    ),
    ("/api/v1/threads/{thread_id}", "get"): (
        "get_thread",
        [_THREAD_ID],
        {"200": {"ListReplies": _link(
            "list_replies", "This question's replies.", thread_id="$response.body#/id"
        )}},
    ),
    ("/api/v1/threads/{thread_id}/replies", "get"): (
        "list_replies",
        [_THREAD_ID, _CURSOR, _LIMIT],
        {
            "200": {
                "NextPage": _link(
                    "list_replies",
                    "The next page of the same question's replies.",
                    thread_id="$request.path.thread_id",
                    cursor="$response.body#/next_cursor",
                )
            }
        },
    ),
}

ENTRY_REQUEST_BODY = {
    "required": True,
    "description": "A question or a reply. The request_id may instead come in an "
    "Idempotency-Key header (plain or as a quoted string); both present and different is "
    "400 bad_request. Text is normalized (NFC, line endings made \\n) before it is checked, "
    "stored or compared, and lengths count characters after that; text holding a lone "
    "surrogate, or more than 30 combining marks (non-starters) in a row once decomposed "
    "(Unicode's Stream-Safe Text Format, UAX #15), is refused as 422 invalid_request "
    "naming the field.",
    "content": {
        "application/json": {
            "schema": {
                "oneOf": [
                    {"$ref": COMPONENTS + "Question"},
                    {"$ref": COMPONENTS + "Reply"},
                ],
                "discriminator": {
                    "propertyName": "type",
                    "mapping": {
                        "question": COMPONENTS + "Question",
                        "reply": COMPONENTS + "Reply",
                    },
                },
            }
        }
    },
}

def openapi_document_complete(document: dict[str, Any]) -> dict[str, Any]:
    """Put the parsers' rules into the document ninja wrote (in place; also returned)."""
    components = document.setdefault("components", {})
    components.setdefault("schemas", {}).update(
        {
            "Question": QUESTION_REQUEST_SCHEMA,
            "Reply": REPLY_REQUEST_SCHEMA,
        }
    )
    for (path, method), (operation_id, parameters, links) in OPERATIONS.items():
        operation = document["paths"].get(path, {}).get(method)
        if operation is None:
            continue  # tests/board/test_openapi.py keeps the table and the routes in step
        operation["operationId"] = operation_id
        operation["parameters"] = parameters
        # The token is optional: ninja states its scheme, `{}` is the anonymous caller.
        operation["security"] = [*operation.get("security", []), {}]
        # ninja keys responses by int; a document read back from JSON by str.
        responses = {str(status): answer for status, answer in operation["responses"].items()}
        for status, status_links in links.items():
            responses[status]["links"] = status_links
    return document


class DocumentedAPI(NinjaAPI):
    """A NinjaAPI whose OpenAPI document states what the board's parsers accept."""

    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        document = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        return openapi_document_complete(document)
