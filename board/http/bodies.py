"""Reading a post off the HTTP wire: its body decoded, bounded and checked as SPEC 5 asks
(`400 bad_request` for what is not a JSON object, too large or too deep), the
`Idempotency-Key` header read with it, and the result handed to `entry_post` as the
fields (board.entries.fields) or the refusal of their shape. The MCP door decodes its own
messages and bounds its arguments' depth here too (`check_json_depth`).
"""

import json
from typing import TypeVar

from django.conf import settings

from board.entries.fields import EntryFields, RefusedShape, entry_fields_read, parse_request_id
from board.exceptions import BadRequest, InvalidRequest

Decoded = TypeVar("Decoded")


def posted_entry_read(body: bytes | None, *, header_key: str | None) -> EntryFields | RefusedShape:
    """A posted body (None: one too large to read) and its `Idempotency-Key` header
    (unquoted), as `entry_post` takes them: the fields, or step 1's refusal of their shape,
    which `entry_post` answers after the token's check."""
    data = None
    try:
        data = parse_json_object(body)
        if header_key is not None:
            data = _with_header_key(data, header_key)
        return entry_fields_read(data)
    except (BadRequest, InvalidRequest) as error:
        asked = header_key or (data.get("request_id") if isinstance(data, dict) else None)
        return RefusedShape(error=error, request_id=asked)


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


