"""Reading a post off the HTTP wire, as django-ninja's body parameter: the body decoded,
bounded and checked as SPEC 5 asks by the API's parser (`400 bad_request` for what is
not a JSON object, too large or too deep), the `Idempotency-Key` header read with it,
then read into the entry's fields by the body's validator (`422 invalid_request`,
board.entries.fields). A refusal of either is raised as `PostRefused`, which the route's
handler hands `entry_post` as the refusal of the post's shape, judged after the token
(SPEC 5.1 step 1). The MCP door decodes its own messages and bounds its arguments' depth
here too (`check_json_depth`).
"""

import json
from typing import Annotated, TypeVar

from django.conf import settings
from django.http import HttpRequest
from ninja import Body
from ninja.parser import Parser
from pydantic import Field, PlainValidator

from board.entries.fields import (
    EntryFields,
    Question,
    RefusedShape,
    Reply,
    entry_fields_read,
    parse_request_id,
)
from board.exceptions import BadRequest, InvalidRequest

Decoded = TypeVar("Decoded")


class PostRefused(Exception):
    """A post whose shape step 1 refused, raised where the door reads it; its `shape` is
    what `entry_post` takes (board.http.api answers it)."""

    def __init__(self, shape: RefusedShape) -> None:
        super().__init__(shape.error)
        self.shape = shape


def posted_refusal(
    error: BadRequest | InvalidRequest, *, header_key: str | None, data: object = None
) -> PostRefused:
    """A refusal of a post's shape, with the request_id it asked for (the header's, else
    the body's as sent: for its log line only)."""
    asked = header_key or (data.get("request_id") if isinstance(data, dict) else None)
    return PostRefused(RefusedShape(error=error, request_id=asked))


def unparsed_body_refusal(request: HttpRequest, body: bytes | None) -> PostRefused:
    """The refusal of a body ninja hands no parser: an empty one (b""), or one over
    Django's own cap (None), which `parse_json_object` refuses as it would ours."""
    try:
        parse_json_object(body)
    except BadRequest as error:
        return posted_refusal(error, header_key=idempotency_key(request))
    raise AssertionError("an empty or unread body is always refused")


class PostedBodyParser(Parser):
    """The API's parser: a body (Django's RequestDataTooBig aside, which the route's
    handler refuses the same way) as `parse_json_object` reads it, with the
    `Idempotency-Key` header's request_id. ninja calls it only for a body that is not
    empty; the route's handler refuses an empty one as this would."""

    def parse_body(self, request: HttpRequest) -> dict:
        header_key = idempotency_key(request)
        data = None
        try:
            data = parse_json_object(request.body)
            return data if header_key is None else _with_header_key(data, header_key)
        except BadRequest as error:
            raise posted_refusal(error, header_key=header_key, data=data) from None


def idempotency_key(request: HttpRequest) -> str | None:
    """The `Idempotency-Key` header: a plain token or an RFC 8941 quoted string."""
    header_key = request.headers.get("Idempotency-Key")
    if header_key is not None:
        header_key = header_key.strip()
        if len(header_key) >= 2 and header_key[0] == header_key[-1] == '"':
            header_key = header_key[1:-1]
    return header_key


def _entry_fields(data: object) -> EntryFields:
    try:
        return entry_fields_read(data)
    except InvalidRequest as error:
        raise posted_refusal(error, header_key=None, data=data) from None


# The route's body: read by `entry_fields_read`, stated in the document as its two forms
# told apart by `type`.
PostedEntry = Annotated[
    EntryFields,
    PlainValidator(
        _entry_fields,
        json_schema_input_type=Annotated[Question | Reply, Field(discriminator="type")],
    ),
    Body(...),
]


def parse_json_object(raw: bytes | None) -> dict:
    """Decode a request body, refusing what SPEC 5 calls a bad request.

    None stands for a body so large the server would not read it.
    """
    if raw is None or len(raw) > settings.SETTLE_MAX_BODY_BYTES:
        raise BadRequest(f"the body is over {settings.SETTLE_MAX_BODY_BYTES // 1024} KiB")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except RecursionError:
        raise BadRequest(
            f"the body is nested deeper than {settings.SETTLE_MAX_JSON_DEPTH} levels"
        ) from None
    except (UnicodeDecodeError, ValueError):
        raise BadRequest("the body is not valid JSON") from None
    # Depth first: Python 3.13's decoder parses what 3.11's refused with RecursionError,
    # and the answer must not depend on the interpreter. A body cannot nest deeper than
    # it has brackets, so most need no walk.
    if raw.count(b"[") + raw.count(b"{") > settings.SETTLE_MAX_JSON_DEPTH:
        check_json_depth(data)
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    return data


def check_json_depth(data: Decoded) -> Decoded:
    """The nesting limit, for a body decoded here or arguments decoded by the MCP layer.
    Walked a level at a time (objects and arrays count; a scalar body has depth 0), and
    stopped at the first level past the limit."""
    limit = settings.SETTLE_MAX_JSON_DEPTH
    depth, level = 0, [data]
    while level:
        below: list = []
        nested = False
        for item in level:
            if isinstance(item, dict):
                below.extend(item.values())
                nested = True
            elif isinstance(item, list):
                below.extend(item)
                nested = True
        if not nested:
            break
        depth += 1
        if depth > limit:
            raise BadRequest(f"the body is nested deeper than {limit} levels")
        level = below
    return data


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _with_header_key(data: dict, header_key: str) -> dict:
    """The body with the `Idempotency-Key` header's request_id, which must agree with the
    body's own when both are given."""
    if "request_id" not in data:
        return {**data, "request_id": header_key}
    try:
        same = parse_request_id(data["request_id"]) == parse_request_id(header_key)
    except ValueError:
        same = data["request_id"] == header_key
    if not same:
        raise BadRequest("the Idempotency-Key header and the body's request_id differ")
    return data


