"""The OpenAPI document at /api/v1/openapi.json, made to say exactly what the API accepts.

Each route states its own operationId (named after the MCP tool that does the same
thing, so the two interfaces share one vocabulary), parameters, answers and links in its
decorator, through `documented`, and django-ninja writes them into the document: each
answer's body from the class the route declares for its status (board.http.json_schemas),
which ninja also validates a success against. The views take each parameter as the
string it was sent (ninja reads it, and leaves it out of the document), so that the
board's parsers, not pydantic, decide and word each refusal (SPEC 5's 400 and 422); the
parameters stated here carry the parsers' rules, with `allowEmptyValue`, which tells a
client (or schemathesis) that `?limit=` and `?cursor=` are read as absent. The rules
themselves live next to the parsers (board/entries/fields.py, board/entries/cursors.py);
this module only places them in the document.

The posted entry's body is ninja's too: the route's body parameter
(board.http.bodies.PostedEntry) is stated as the two forms of the class that reads a post
(board.entries.fields: `Question`, `Reply`), told apart by `type`.
"""

from collections.abc import Sequence
from typing import Annotated, Any

from ninja import NinjaAPI
from pydantic import BaseModel, WithJsonSchema

from board.entries.fields import ENTRY_ID_FIELD_SCHEMA, REQUEST_ID_FIELD_SCHEMA
from board.http.json_schemas import (
    CURSOR_FIELD_SCHEMA,
    ERROR_DESCRIPTIONS,
    LIMIT_FIELD_SCHEMA,
    ErrorAnswer,
    inlined,
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


# What the operations read, with the parsers' rules.
THREADS_PAGE = [_CURSOR, _LIMIT]
REPLIES_PAGE = [_THREAD_ID, _CURSOR, _LIMIT]
THREAD = [_THREAD_ID]
OPERATION = [_REQUEST_ID]

# Where each operation's answers lead: {status: {link name: link}}.
TO_OPERATION = {"GetOperation": _TO_OPERATION}
THREAD_PAGE_LINKS = {
    "GetThread": _TO_FIRST_THREAD,
    "ListReplies": _TO_FIRST_THREADS_REPLIES,
    "NextPage": _link("list_threads", "The next page.", cursor="$response.body#/next_cursor"),
}
THREAD_LINKS = {
    "ListReplies": _link(
        "list_replies", "This question's replies.", thread_id="$response.body#/id"
    )
}
REPLY_PAGE_LINKS = {
    "NextPage": _link(
        "list_replies",
        "The next page of the same question's replies.",
        thread_id="$request.path.thread_id",
        cursor="$response.body#/next_cursor",
    )
}


def stated(model: type[BaseModel]) -> Any:
    """`model` as a route declares it: validated by the class, stated in the document
    with its references resolved in place (as the MCP tools' outputSchema states it)."""
    return Annotated[model, WithJsonSchema(inlined(model))]


def documented(
    operation_id: str,
    successes: dict[int, tuple[str, type[BaseModel]]],
    *errors: int,
    parameters: Sequence[dict] = (),
    links: dict[int, dict[str, dict]] | None = None,
    **extra: object,
) -> dict:
    """A route decorator's answers and documentation: its operationId, its answers
    (`successes`' classes, then SPEC 5's error shape for each of `errors`, as ninja's
    `response`), each described and with the links from it, its parameters, and `extra`
    (a requestBody). The token is optional: ninja states its scheme, `{}` is the
    anonymous caller."""
    responses = {status: {"description": said} for status, (said, _) in successes.items()}
    responses.update({status: {"description": ERROR_DESCRIPTIONS[status]} for status in errors})
    for status, status_links in (links or {}).items():
        responses[status]["links"] = status_links
    answers: dict = {status: stated(model) for status, (_, model) in successes.items()}
    answers[errors] = stated(ErrorAnswer)
    return {
        "operation_id": operation_id,
        "response": answers,
        "openapi_extra": {
            "parameters": list(parameters), "responses": responses, "security": [{}], **extra
        },
    }


# The posted entry's body: ninja writes its content from the route's body parameter
# (board.http.bodies.PostedEntry); what it says of both forms is said here.
ENTRY_REQUEST_BODY = {
    "description": "A question or a reply. The request_id may instead come in an "
    "Idempotency-Key header (plain or as a quoted string); both present and different is "
    "400 bad_request. Text is normalized (NFC, line endings made \\n) before it is checked, "
    "stored or compared, and lengths count characters after that; text holding a lone "
    "surrogate, or more than 30 combining marks (non-starters) in a row once decomposed "
    "(Unicode's Stream-Safe Text Format, UAX #15), is refused as 422 invalid_request "
    "naming the field.",
}


class DocumentedAPI(NinjaAPI):
    """A NinjaAPI whose answers all say the same content type."""

    def get_content_type(self) -> str:
        # What every answer says, its refusals' included (board.http.api.answer_response):
        # JSON is UTF-8 by definition (RFC 8259), so no charset.
        return self.renderer.media_type
