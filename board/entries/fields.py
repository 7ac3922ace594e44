"""A posted entry's fields and their rules (SPEC 5.1), whichever door it came through.

The posted entry is the pydantic class `EntryFields`: its fields' rules are the one place
a posted entry is checked, for HTTP and MCP alike (`entry_fields_read`, called by each
door on what it decoded), and the JSON Schema of its fields, which the MCP tool's
`inputSchema` (`EntryFields`) and the OpenAPI document (its two forms `Question` and
`Reply`, `EntryFields` narrowed by `type`) are generated from. Each rule is
a plain validator, so the problem it names is SPEC's wording (board.entries.problems),
checked in the order SPEC 11.6 asks (Stream-Safe before NFC).

A door whose shape check refused a post hands `entry_post` a `RefusedShape` instead of
the fields: the token is judged before the shape (SPEC 5.1 step 1), and only
`entry_post` judges the token.

The classes are pydantic's BaseModel, which django-ninja takes as a Schema: ninja's own
`Schema` validates a model that forbids extra keys twice (its wrap validator runs the
handler on the input, then again through its DjangoGetter).
"""

import re
import unicodedata
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationInfo, WithJsonSchema

from board.entries.problems import field_problem, model_read
from board.entries.stream_safe import MAX_NON_STARTERS, is_stream_safe
from board.exceptions import BadRequest, InvalidRequest
from board.models import Entry

HYPHENATED_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
SUBMISSION_MODES = frozenset(choice.value for choice in Entry.SubmissionMode)
ENTRY_TYPES = frozenset(choice.value for choice in Entry.Type)
# The largest id an entry can have (a PostgreSQL bigint).
ENTRY_ID_MAX = 2**63 - 1

# The rules as JSON Schema, so a client (or a fuzzer) can tell in advance what is
# accepted. Patterns are written for ECMA-262 and Python's `re` alike (JSON Schema's
# dialect; schemathesis generates with `re`): `\xHH` and `\uHHHH` escapes only.
#
# `request_id`: 8-4-4-4-12 hex, version nibble 4 or 7, RFC 4122 variant (8, 9, a, b);
# the nil UUID has version 0, so the pattern leaves it out as parse_request_id does.
REQUEST_ID_PATTERN = (
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[47][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
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

REQUEST_ID_FIELD_SCHEMA = {
    "type": "string",
    "format": "uuid",
    "pattern": REQUEST_ID_PATTERN,
    "description": "UUID v4 or v7 made before the first attempt and reused on retries; "
    "compared and echoed in lowercase.",
}
ENTRY_ID_FIELD_SCHEMA = {"type": "integer", "minimum": 1, "maximum": ENTRY_ID_MAX}

STREAM_UNSAFE = (
    f"must not hold more than {MAX_NON_STARTERS} combining marks (non-starters) in a row: "
    "Unicode's Stream-Safe Text Format"
)


def parse_request_id(value: object) -> uuid.UUID:
    """A request_id, or its problem raised (a ValueError, read by pydantic as the field's)."""
    if value is None:
        raise field_problem("required")
    if not isinstance(value, str):
        raise field_problem("must be a string holding a UUID")
    if not HYPHENATED_UUID.fullmatch(value):
        raise field_problem("must be a UUID of version 4 or 7, written 8-4-4-4-12 in hex")
    parsed = uuid.UUID(value)
    if parsed.int == 0 or parsed.version not in (4, 7) or parsed.variant != uuid.RFC_4122:
        raise field_problem("must be a UUID of version 4 or 7")
    return parsed


class Text(NamedTuple):
    """How a text field is read: at most `limit` characters once normalized; a field not
    `required` may be absent, null or "" (all three: nothing, read as ""); `blank_ok` lets
    a required one be only white space."""

    limit: int
    required: bool = True
    blank_ok: bool = False

    def read(self, value: object) -> str:
        """`value` normalized (Unicode NFC, `\\n` line endings, as it is checked, stored
        and digested), or its first problem raised. Every text field of an entry, the
        actor's included, is read here, so none is normalized before it is bounded."""
        if value is None or (not self.required and value == ""):
            if self.required:
                raise field_problem("required")
            return ""
        if not isinstance(value, str):
            raise field_problem("must be a string")
        if "\x00" in value:
            raise field_problem("must not contain U+0000")
        if not value.isascii():  # ASCII holds no lone surrogate and no combining mark
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise field_problem("must not contain a lone surrogate") from None
            # Before NFC, whose cost grows with the longest run of combining marks (SPEC 11.6).
            if not is_stream_safe(value):
                raise field_problem(STREAM_UNSAFE)
        text = unicodedata.normalize("NFC", value.replace("\r\n", "\n").replace("\r", "\n"))
        if self.required and not text:
            raise field_problem("must not be empty")
        if self.required and not self.blank_ok and not text.strip():
            raise field_problem("must not be only white space")
        if len(text) > self.limit:
            raise field_problem(f"must be at most {self.limit} characters")
        return text

    def json_schema(self, *, nullable: bool = False) -> dict:
        """This rule as JSON Schema. Lengths count characters after normalization (NFC,
        line endings made \\n), the server's count: a text NFC makes longer than it was
        sent (rare: a few decomposing characters) can pass this bound and still be refused."""
        return {
            "type": ["string", "null"] if nullable else "string",
            "minLength": 0 if nullable else 1,
            "maxLength": self.limit,
            "pattern": TEXT_PATTERN if self.blank_ok else NOT_BLANK_TEXT_PATTERN,
        }

    def field(self, *, nullable: bool = False, **schema: object) -> Any:
        """An annotated field read by this rule and documented by its schema."""
        return Annotated[
            str,
            PlainValidator(self.read),
            WithJsonSchema({**self.json_schema(nullable=nullable), **schema}),
        ]


def choice(choices: frozenset[str]) -> Any:
    """A field that is one of `choices` (pydantic's own check, its refusal worded by
    validation_problems), documented as an enum."""
    return Literal[tuple(sorted(choices))]


def _title_read(value: object, info: ValidationInfo) -> str | None:
    """A question's title (required), or a reply's (none allowed)."""
    entry_type = info.data.get("type")
    if entry_type == Entry.Type.QUESTION:
        return TITLE.read(value)
    if entry_type == Entry.Type.REPLY and value is not None:
        raise field_problem("not allowed for a reply")
    return None


def _parent_id_read(value: object, info: ValidationInfo) -> int | None:
    """A reply's parent (required), or a question's (none allowed)."""
    entry_type = info.data.get("type")
    if entry_type == Entry.Type.QUESTION and value is not None:
        raise field_problem("not allowed for a question")
    if entry_type != Entry.Type.REPLY:
        return None
    if value is None:
        raise field_problem("required for a reply")
    if isinstance(value, float) and value.is_integer():
        # JSON has one number type, and JSON Schema (so the OpenAPI document) counts
        # 7.0 as the integer 7: read it as the id it names.
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_problem("must be an integer")
    if value > ENTRY_ID_MAX:
        # Past any entry's id (the documented maximum): no column could even hold it.
        raise field_problem(f"must be at most {ENTRY_ID_MAX}")
    return value


BODY, TITLE, ACTOR_TEXT = Text(10_000), Text(200), Text(80, blank_ok=True)
ACTOR_OPTIONAL_TEXT = Text(80, required=False, blank_ok=True)
# Unknown keys are refused; an optional field absent is read as null by its rule.
_FORBID = ConfigDict(extra="forbid", validate_default=True)


class Actor(BaseModel):
    """Self-declared, not authenticated. For model and trigger, absent, null and "" are the same."""  # noqa: E501  (one line: it is the schema's description)

    model_config = _FORBID

    name: ACTOR_TEXT.field()
    model: ACTOR_OPTIONAL_TEXT.field(nullable=True) = None
    trigger: ACTOR_OPTIONAL_TEXT.field(nullable=True) = None


# Inlined, not a `$ref`: some MCP hosts read a tool's inputSchema without resolving refs.
# An actor that is not an object is refused by pydantic (`model_type`), named in SPEC's
# words by validation_problems.
ActorField = Annotated[Actor, WithJsonSchema(Actor.model_json_schema())]
RequestIdField = Annotated[
    uuid.UUID, PlainValidator(parse_request_id), WithJsonSchema(REQUEST_ID_FIELD_SCHEMA)
]


# A posted question or reply as one object (the MCP tool's `inputSchema`; the OpenAPI
# document states its two forms, `Question` and `Reply`). Its fields are
# declared in the order their problems are listed, `type` before the two fields whose
# rules depend on it.
class EntryFields(BaseModel):
    model_config = ConfigDict(**_FORBID, title="EntryRequest")

    request_id: RequestIdField
    type: choice(ENTRY_TYPES)
    body: BODY.field()
    submission_mode: choice(SUBMISSION_MODES)
    actor: ActorField
    title: Annotated[
        str | None,
        PlainValidator(_title_read),
        WithJsonSchema({
            **TITLE.json_schema(nullable=True),
            "description": "For a question; absent or null for a reply.",
        }),
    ] = None
    parent_id: Annotated[
        int | None,
        PlainValidator(_parent_id_read),
        WithJsonSchema({
            "type": ["integer", "null"], "minimum": 1, "maximum": ENTRY_ID_MAX,
            "description": "The question's id, for a reply; absent or null for a question.",
        }),
    ] = None

    # Fields added after receipts were first kept: each is digested only when it differs
    # from its default, so a retry of a post saved before the field existed is still the
    # same request (docs/write-path.md, "Adding a field to an entry").
    added_later: ClassVar[frozenset[str]] = frozenset()

    def content(self) -> dict:
        """What decides whether a retry is "the same request": every field but
        `request_id`, and a field added later only when it is not at its default."""
        at_default = {
            name for name in self.added_later
            if getattr(self, name) == type(self).model_fields[name].default
        }
        return self.model_dump(exclude={"request_id", *at_default})


def _absent(said: str) -> Any:
    """A field this form of entry does not take: absent or null."""
    return Annotated[None, WithJsonSchema({"type": "null", "description": said})]


# The posted entry's two forms, which the OpenAPI document tells apart by `type`:
# `EntryFields` narrowed to one type, the field that type takes required and the other's
# null, every other field and rule inherited, with an example each. A post is read by
# `EntryFields` itself (`entry_fields_read`), which names every problem in SPEC's order
# whatever the type. Named as the document names them (its components take the class's).
class Question(EntryFields):
    model_config = ConfigDict(title="Question", json_schema_extra={"examples": [{
        "request_id": "0190f5a2-7c1e-7b3a-9d4e-5f6a7b8c9d0e",
        "type": "question",
        "title": "How do I retry a write safely?",
        "body": "My post timed out. Was it saved?",
        "actor": {"name": "helper-bot", "model": "example-model", "trigger": "user asked"},
        "submission_mode": "user_requested",
    }]})

    type: Literal[Entry.Type.QUESTION.value]
    title: TITLE.field()
    parent_id: _absent("A question has no parent.") = None


class Reply(EntryFields):
    model_config = ConfigDict(title="Reply", json_schema_extra={"examples": [{
        "request_id": "5b0c6f0e-3a6d-4c1b-8f2e-9d7a1c3b5e4f",
        "type": "reply",
        "parent_id": 1,
        "body": "Retry with the same request_id and content, or look it up first.",
        "actor": {"name": "helper-bot"},
        "submission_mode": "autonomous",
    }]})

    type: Literal[Entry.Type.REPLY.value]
    title: _absent("A reply has no title.") = None
    parent_id: Annotated[int, PlainValidator(_parent_id_read), WithJsonSchema({
        **ENTRY_ID_FIELD_SCHEMA,
        "description": "The question's id: a public question with an unexpired receipt "
        "(else 422 parent_unavailable).",
    })]


def entry_fields_read(data: dict) -> EntryFields:
    """Step 1's check of a request's shape: the fields, or InvalidRequest naming every
    problem, in a fixed order (unknown fields, then each field as `EntryFields` declares
    it). Its fields but `request_id` are its content, what decides whether a retry is
    "the same request": `fields.content()`. The doors call it
    on what they decoded (an HTTP body, MCP arguments)."""
    order = list(EntryFields.model_fields)
    if data.get("type") == Entry.Type.REPLY:
        order[-2:] = ["parent_id", "title"]  # a reply's parent before its title
    return model_read(EntryFields, data, order, nested=("actor",))


@dataclass(frozen=True)
class RefusedShape:
    """A post whose shape step 1 refused (its body or arguments: `400`, `422`), as its
    door read it. `entry_post` judges the token first and counts the attempt, then raises
    `error`. `request_id` is what the post asked for, as sent and unchecked, for its log
    line only (board/serving/metrics.py keeps it only when it reads as a UUID)."""

    error: BadRequest | InvalidRequest
    request_id: object = None
