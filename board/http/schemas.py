"""Translating an entry between its wire form and the board's own.

`parse_entry_request` is the one place a posted entry is checked (SPEC 5.1), for HTTP and
MCP alike; `entry_object` is the one place it is written back.
"""

import json
import re
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, TypeVar

from django.conf import settings

from board.exceptions import BadRequest, InvalidRequest
from board.http.cursors import bookmark_cursor
from board.http.stream_safe import MAX_NON_STARTERS, is_stream_safe
from board.models import Entry
from receipts.models import Receipt

Decoded = TypeVar("Decoded")

HYPHENATED_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
ENTRY_FIELDS = {"request_id", "type", "parent_id", "title", "body", "actor", "submission_mode"}
ACTOR_FIELDS = {"name", "model", "trigger"}
SUBMISSION_MODES = frozenset(choice.value for choice in Entry.SubmissionMode)
ENTRY_TYPES = frozenset(choice.value for choice in Entry.Type)


class Text(NamedTuple):
    """How a text field is read: at most `limit` characters once normalized; a field not
    `required` may be absent, null or "" (all three: nothing); `blank_ok` lets a required
    one be only white space."""

    limit: int
    required: bool = True
    blank_ok: bool = False


BODY, TITLE = Text(10_000), Text(200)
STREAM_UNSAFE = (
    f"must not hold more than {MAX_NON_STARTERS} combining marks (non-starters) in a row: "
    "Unicode's Stream-Safe Text Format"
)
# The actor's fields, in the order their problems are listed: (name, rule).
ACTOR_TEXTS = (
    ("name", Text(80, blank_ok=True)),
    ("model", Text(80, required=False, blank_ok=True)),
    ("trigger", Text(80, required=False, blank_ok=True)),
)


@dataclass(frozen=True)
class EntryRequest:
    request_id: uuid.UUID
    type: str
    parent_id: int | None
    title: str | None
    body: str
    actor_name: str
    actor_model: str
    actor_trigger: str
    submission_mode: str

    def content(self) -> dict[str, object]:
        """The fields that decide whether a retry is 'the same request'."""
        return {
            "type": self.type,
            "parent_id": self.parent_id,
            "title": self.title,
            "body": self.body,
            "actor": {
                "name": self.actor_name,
                "model": self.actor_model,
                "trigger": self.actor_trigger,
            },
            "submission_mode": self.submission_mode,
        }


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
    # and the answer must not depend on the interpreter.
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


def parse_entry_request(data: dict, *, header_key: str | None = None) -> EntryRequest:
    """Step 1's check of a request's shape: the request, or InvalidRequest naming every
    problem, in a fixed order (unknown fields, then each field as read here)."""
    if header_key is not None:
        data = _with_header_key(data, header_key)
    problems: dict[str, str] = {}
    for name in sorted(data.keys() - ENTRY_FIELDS):
        problems[name] = "unknown field"
    request_id = None
    try:
        request_id = parse_request_id(data.get("request_id"))
    except ValueError as error:
        problems["request_id"] = str(error)
    entry_type = _read(problems, "type", data.get("type"), ENTRY_TYPES)
    body = _read(problems, "body", data.get("body"), BODY)
    mode = _read(problems, "submission_mode", data.get("submission_mode"), SUBMISSION_MODES)
    actor = {"name": "", "model": "", "trigger": ""}
    given = data.get("actor")
    if given is None:
        problems["actor"] = "required"
    elif not isinstance(given, dict):
        problems["actor"] = "must be an object"
    else:
        for name in sorted(given.keys() - ACTOR_FIELDS):
            problems[f"actor.{name}"] = "unknown field"
        for name, rule in ACTOR_TEXTS:
            actor[name] = _read(problems, f"actor.{name}", given.get(name), rule) or ""
    title, parent_id = None, None
    if entry_type == Entry.Type.QUESTION:
        title = _read(problems, "title", data.get("title"), TITLE)
        if data.get("parent_id") is not None:
            problems["parent_id"] = "not allowed for a question"
    elif entry_type == Entry.Type.REPLY:
        try:
            parent_id = _parent_id(data.get("parent_id"))
        except ValueError as error:
            problems["parent_id"] = str(error)
        if data.get("title") is not None:
            problems["title"] = "not allowed for a reply"
    if problems:
        raise InvalidRequest([{"field": name, "problem": said} for name, said in problems.items()])
    return EntryRequest(
        request_id=request_id,
        type=entry_type,
        parent_id=parent_id,
        title=title,
        body=body,
        actor_name=actor["name"],
        actor_model=actor["model"],
        actor_trigger=actor["trigger"],
        submission_mode=mode,
    )


def parse_request_id(value: object) -> uuid.UUID:
    if value is None:
        raise ValueError("required")
    if not isinstance(value, str):
        raise ValueError("must be a string holding a UUID")
    if not HYPHENATED_UUID.fullmatch(value):
        raise ValueError("must be a UUID of version 4 or 7, written 8-4-4-4-12 in hex")
    parsed = uuid.UUID(value)
    if parsed.int == 0 or parsed.version not in (4, 7) or parsed.variant != uuid.RFC_4122:
        raise ValueError("must be a UUID of version 4 or 7")
    return parsed


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


def _read(
    problems: dict[str, str], field: str, value: object, rule: Text | frozenset
) -> str | None:
    """`value` read by its rule, a set of choices or a Text: the value (text normalized:
    Unicode NFC, `\\n` line endings, as it is checked, stored and digested), or None with
    the first problem recorded under `field`. Every text field of an entry, the actor's
    included, is read here, so none is normalized before it is bounded."""
    try:
        if isinstance(rule, frozenset):
            if value is None:
                raise ValueError("required")
            if not isinstance(value, str) or value not in rule:
                raise ValueError("must be one of " + ", ".join(sorted(rule)))
            return value
        if value is None or (not rule.required and value == ""):
            if rule.required:
                raise ValueError("required")
            return None
        if not isinstance(value, str):
            raise ValueError("must be a string")
        if "\x00" in value:
            raise ValueError("must not contain U+0000")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("must not contain a lone surrogate") from None
        # Before NFC, whose cost grows with the longest run of combining marks (SPEC 11.6).
        if not is_stream_safe(value):
            raise ValueError(STREAM_UNSAFE)
        text = unicodedata.normalize("NFC", value.replace("\r\n", "\n").replace("\r", "\n"))
        if rule.required and not text:
            raise ValueError("must not be empty")
        if rule.required and not rule.blank_ok and not text.strip():
            raise ValueError("must not be only white space")
        if len(text) > rule.limit:
            raise ValueError(f"must be at most {rule.limit} characters")
        return text
    except ValueError as error:
        problems[field] = str(error)
        return None


def _parent_id(value: object) -> int:
    if value is None:
        raise ValueError("required for a reply")
    if isinstance(value, float) and value.is_integer():
        # JSON has one number type, and JSON Schema (so the OpenAPI document) counts
        # 7.0 as the integer 7: read it as the id it names.
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be an integer")
    if value > ENTRY_ID_MAX:
        # Past any entry's id (the documented maximum): no column could even hold it.
        raise ValueError(f"must be at most {ENTRY_ID_MAX}")
    return value


# --- Writing entries back out -------------------------------------------------------


def entry_object(
    entry: Entry, receipt: Receipt | None = None, *, replayed: bool = False, base_url: str
) -> dict:
    """An entry as the API writes it; with its receipt, as its poster sees it (a post's
    answer, an operation's result)."""
    bookmark = None
    if entry.type == Entry.Type.QUESTION:
        url = f"{base_url}/threads/{entry.pk}"
    else:
        url = f"{base_url}/threads/{entry.parent_id}#reply-{entry.pk}"
        bookmark = (
            f"{base_url}/api/v1/threads/{entry.parent_id}/replies"
            f"?cursor={bookmark_cursor(entry.pk)}"
        )
    written = {
        "id": entry.pk,
        "type": entry.type,
        "parent_id": entry.parent_id,
        "title": entry.title,
        "body": entry.body,
        "actor": {
            "name": entry.actor_name,
            "model": entry.actor_model,
            "trigger": entry.actor_trigger,
        },
        "submission_mode": entry.submission_mode,
        "created_at": timestamp(entry.created_at),
        "visible": entry.visible,
        "url": url,
        "bookmark_url": bookmark,
    }
    if receipt is not None:
        written["request_id"] = str(receipt.request_id)
        written["replayed"] = replayed
        written["route"] = receipt.first_route
        written["receipt_expires_at"] = timestamp(receipt.receipt_expires_at)
    return written


def public_entry_object(entry: Entry, base_url: str) -> dict:
    """An entry as anyone may read it (lists, threads, webhooks): no receipt fields."""
    return entry_object(entry, base_url=base_url)


def timestamp(moment: datetime | None) -> str | None:
    """A time as the API writes it: ISO 8601 in UTC with a `Z`."""
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")

# The largest id an entry can have (a PostgreSQL bigint).
ENTRY_ID_MAX = 2**63 - 1
