"""The OpenAPI document states the parsers' rules (issue 8), checked here rule by rule
against the parsers themselves; tests/e2e/test_openapi_conformance.py runs schemathesis
over the whole document against a live server."""

import base64
import re
import sys
import uuid

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openapi_spec_validator import OpenAPIV31SpecValidator

from board.entries.cursors import CURSOR_PATTERN, decode_cursor, encode_cursor
from board.entries.fields import (
    NOT_BLANK_TEXT_PATTERN,
    REQUEST_ID_PATTERN,
    WHITE_SPACE_CLASS,
    Question,
    Reply,
    entry_fields_read,
    parse_request_id,
)
from board.exceptions import BadRequest
from board.models import Entry
from tests.conftest import counts, question, reply

MCP_TOOLS = {
    "post_entry", "new_request_id", "get_operation", "list_threads", "get_thread", "list_replies"
}


@pytest.fixture
def document(anonymous) -> dict:
    return anonymous.client.get("/api/v1/openapi.json").json()


def test_the_served_document_is_valid_openapi_3_1(document):
    # Code generators read it: openapi-spec-validator is what they would meet first.
    assert document["openapi"].startswith("3.1")

    problems = [
        f"{'/'.join(str(part) for part in error.absolute_path)}: {error.message}"
        for error in OpenAPIV31SpecValidator(document).iter_errors()
    ]

    assert problems == []


def test_it_describes_every_route_under_the_mcp_tools_names(document):
    routes = {
        (path, method): operation["operationId"]
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }

    assert sorted(routes.values()) == sorted(MCP_TOOLS)


def test_it_states_each_parameters_type_pattern_and_bounds(document):
    parameters = {
        (operation["operationId"], parameter["name"]): parameter["schema"]
        for methods in document["paths"].values()
        for operation in methods.values()
        for parameter in operation["parameters"]
    }

    assert parameters[("list_threads", "limit")] == {
        "type": "integer", "minimum": 1, "maximum": 100, "default": 50,
    }
    assert parameters[("list_replies", "limit")]["maximum"] == 100
    assert parameters[("get_operation", "request_id")]["pattern"] == REQUEST_ID_PATTERN
    assert parameters[("get_thread", "thread_id")]["type"] == "integer"
    assert "^(?:" in parameters[("list_threads", "cursor")]["pattern"]


def test_it_posts_a_question_or_a_reply_told_apart_by_type(document):
    body = document["paths"]["/api/v1/entries"]["post"]["requestBody"]["content"]
    schema = body["application/json"]["schema"]
    components = document["components"]["schemas"]
    resolver = {"components": document["components"], **schema}

    assert schema["discriminator"]["propertyName"] == "type"
    assert set(schema["discriminator"]["mapping"]) == {"question", "reply"}
    assert "parent_id" in components["Reply"]["required"]
    assert "title" in components["Question"]["required"]
    valid, invalid = (
        [question(), reply(7), question(parent_id=None), reply(7, title=None)],
        [
            question(parent_id=7),  # a question with a parent
            reply(7, title="A title"),  # a reply with a title
            {k: v for k, v in reply(7).items() if k != "parent_id"},
            question(title=" \u3000\n"),  # only white space
            question(body="nul \x00 inside"),
            question(request_id=str(uuid.uuid1())),
            question(request_id="00000000-0000-0000-0000-000000000000"),
            question(colour="red"),
        ],
    )
    for payload in valid:
        jsonschema.validate(payload, resolver)
    for payload in invalid:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(payload, resolver)


def test_its_two_forms_are_the_posted_entry_narrowed_by_type(document):
    # The document's forms are generated from the class that reads a post: what one
    # form accepts, the post reads the same, and its example is a post the board takes.
    components = document["components"]["schemas"]
    for form, payload in ((Question, question()), (Reply, reply(7))):
        assert form.model_validate(payload).model_dump() == (
            entry_fields_read(payload).model_dump()
        )
        for example in components[form.model_config["title"]]["examples"]:
            assert form.model_validate(example).model_dump() == (
                entry_fields_read(example).model_dump()
            )
    with pytest.raises(ValueError):
        Question.model_validate(reply(7))
    with pytest.raises(ValueError):
        Reply.model_validate(question())


def test_it_links_what_a_call_makes_to_where_it_can_be_read(document):
    def links(path: str, method: str, status: str) -> dict[str, str]:
        answer = document["paths"][path][method]["responses"][status]
        return {name: link["operationId"] for name, link in answer["links"].items()}

    assert links("/api/v1/request-ids", "post", "201") == {"GetOperation": "get_operation"}
    assert links("/api/v1/entries", "post", "201") == {"GetOperation": "get_operation"}
    assert links("/api/v1/entries", "post", "200") == {"GetOperation": "get_operation"}
    assert links("/api/v1/threads", "get", "200") == {
        "GetThread": "get_thread", "ListReplies": "list_replies", "NextPage": "list_threads",
    }
    assert links("/api/v1/threads/{thread_id}", "get", "200") == {"ListReplies": "list_replies"}


def test_its_white_space_is_what_the_parser_strips():
    spaces = re.compile(f"[{WHITE_SPACE_CLASS}]")
    for code in range(sys.maxunicode + 1):
        character = chr(code)
        assert bool(spaces.fullmatch(character)) == (not character.strip()), hex(code)


@pytest.mark.parametrize("text", [" ", "\t\n", "\x1c", "\x85", "\u3000", "\u2028"])
def test_its_not_blank_pattern_refuses_only_white_space(text):
    assert not re.search(NOT_BLANK_TEXT_PATTERN, text)
    assert re.search(NOT_BLANK_TEXT_PATTERN, text + "x")


@settings(max_examples=300)
@given(st.one_of(st.uuids(), st.integers(0, 2**128 - 1).map(lambda n: uuid.UUID(int=n))))
def test_its_request_id_pattern_accepts_what_the_parser_accepts(value):
    for text in (str(value), str(value).upper()):
        try:
            parse_request_id(text)
            accepted = True
        except ValueError:
            accepted = False
        assert bool(re.fullmatch(REQUEST_ID_PATTERN, text)) == accepted, text


@settings(max_examples=300)
@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_every_cursor_the_server_makes_matches_the_pattern(after_id):
    assert re.fullmatch(CURSOR_PATTERN, encode_cursor(after_id))


@settings(max_examples=300)
@given(st.from_regex(CURSOR_PATTERN, fullmatch=True))
def test_every_cursor_the_pattern_allows_is_one_the_server_reads(cursor):
    assert encode_cursor(decode_cursor(cursor)) == cursor


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param(encode_cursor(5) + "=", id="padded"),
        pytest.param(encode_cursor(5)[:8] + "." + encode_cursor(5)[8:], id="stray-character"),
        pytest.param(base64.urlsafe_b64encode(b'{"after": 5}').decode(), id="json-with-a-space"),
        pytest.param(base64.urlsafe_b64encode(b'{"after":05}').decode(), id="leading-zero"),
    ],
)
def test_it_refuses_a_cursor_the_server_did_not_make(cursor):
    with pytest.raises(BadRequest):
        decode_cursor(cursor)


@pytest.mark.django_db
def test_it_answers_400_for_a_cursor_holding_deeply_nested_json(anonymous):
    nested = base64.urlsafe_b64encode(b"[" * 2500).decode().rstrip("=")

    response = anonymous.get(f"/api/v1/threads?cursor={nested}")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"


@pytest.mark.django_db
def test_it_reads_an_empty_cursor_and_limit_as_the_first_page(anonymous, roomy_limits):
    posted = anonymous.post(question()).json()

    response = anonymous.get("/api/v1/threads?cursor=&limit=")

    assert response.status_code == 200
    assert [item["id"] for item in response.json()["items"]] == [posted["id"]]


@pytest.mark.django_db
def test_it_reads_a_parent_id_written_with_a_zero_fraction(anonymous, roomy_limits):
    # JSON Schema calls 7.0 an integer, so the document allows it; the parser agrees.
    thread = anonymous.post(question()).json()

    response = anonymous.post(reply(float(thread["id"])))

    assert response.status_code == 201
    assert response.json()["parent_id"] == thread["id"]
    assert Entry.objects.get(pk=response.json()["id"]).parent_id == thread["id"]
    assert counts()["entries"] == 2
