"""Bad input gets the contract's error shape and changes nothing; nothing answers 500."""

import json
import uuid

import pytest

from tests.conftest import counts, question

pytestmark = pytest.mark.django_db

NESTED_1000 = "[" * 1000 + "]" * 1000
DEEP_OBJECT = json.dumps(question()).replace('"body"', '"deep": ' + NESTED_1000 + ', "body"')


def assert_refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert counts() == {"entries": 0, "receipts": 0, "tombstones": 0, "attempts": 0}
    return error


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="malformed-json"),
        pytest.param(b"[1, 2]", id="json-array"),
        pytest.param(b'"a string"', id="json-string"),
        pytest.param(b"", id="empty-body"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
        pytest.param(b'{"request_id": NaN}', id="nan"),
        pytest.param(json.dumps({**question(), "body": "x" * 300 * 1024}).encode(), id="300KiB"),
        pytest.param(NESTED_1000.encode(), id="nested-1000-array"),
        pytest.param(DEEP_OBJECT.encode(), id="nested-1000-inside-object"),
        pytest.param(("[" * 100_000).encode(), id="nested-100000-unclosed"),
    ],
)
def test_it_answers_bad_request_for_a_body_that_is_not_a_json_object(anonymous, body):
    assert_refused(anonymous.post_raw(body), 400, "bad_request")


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"request_id": None}, "request_id"),
        ({"request_id": 12}, "request_id"),
        ({"request_id": "not-a-uuid"}, "request_id"),
        ({"request_id": str(uuid.uuid1())}, "request_id"),
        ({"request_id": "00000000-0000-0000-0000-000000000000"}, "request_id"),
        ({"request_id": f"{{{uuid.uuid4()}}}"}, "request_id"),
        ({"request_id": f"urn:uuid:{uuid.uuid4()}"}, "request_id"),
        ({"request_id": uuid.uuid4().hex}, "request_id"),
        ({"request_id": f" {uuid.uuid4()} "}, "request_id"),
        ({"type": "comment"}, "type"),
        ({"type": None}, "type"),
        ({"title": ""}, "title"),
        ({"title": "   \n\t "}, "title"),
        ({"title": "t" * 201}, "title"),
        ({"title": 5}, "title"),
        ({"body": ""}, "body"),
        ({"body": " "}, "body"),
        ({"body": "b" * 10_001}, "body"),
        ({"body": ["list"]}, "body"),
        ({"body": "nul \x00 inside"}, "body"),
        ({"body": "lone \ud800 surrogate"}, "body"),
        ({"actor": "bot"}, "actor"),
        ({"actor": None}, "actor"),
        ({"actor": {}}, "actor.name"),
        ({"actor": {"name": "n" * 81}}, "actor.name"),
        ({"actor": {"name": "bot", "model": "m" * 81}}, "actor.model"),
        ({"actor": {"name": "bot", "trigger": 7}}, "actor.trigger"),
        ({"actor": {"name": "bot", "mood": "happy"}}, "actor.mood"),
        ({"submission_mode": "robot"}, "submission_mode"),
        ({"parent_id": 1}, "parent_id"),
        ({"extra": True}, "extra"),
        # A key no field's name could be (a lone surrogate), at the top and in the actor.
        ({"\ud800": True}, "\ud800"),
        ({"actor": {"name": "bot", "\udfff": 1}}, "actor.\udfff"),
    ],
)
def test_it_names_the_invalid_field(anonymous, overrides, field):
    error = assert_refused(anonymous.post(question(**overrides)), 422, "invalid_request")

    assert field in [problem["field"] for problem in error["fields"]]


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"parent_id": None}, "parent_id"),
        ({"parent_id": "12"}, "parent_id"),
        ({"parent_id": True}, "parent_id"),
        ({"parent_id": 1.5}, "parent_id"),
        ({"parent_id": 2**63}, "parent_id"),  # past a bigint key; schemathesis found a 503
        ({"parent_id": 1, "title": "Replies have no title"}, "title"),
    ],
)
def test_it_names_the_invalid_reply_field(anonymous, overrides, field):
    payload = {**question(type="reply"), **overrides}
    payload.pop("title", None) if "title" not in overrides else None

    error = assert_refused(anonymous.post(payload), 422, "invalid_request")

    assert field in [problem["field"] for problem in error["fields"]]


def test_it_lists_every_missing_field(anonymous):
    error = assert_refused(anonymous.post({}), 422, "invalid_request")

    assert {p["field"] for p in error["fields"]} == {
        "request_id", "type", "body", "actor", "submission_mode"
    }


def test_it_counts_characters_after_normalization(anonymous):
    # 200 decomposed "é" are 400 code points but 200 characters once NFC-normalized.
    response = anonymous.post(question(title="e\u0301" * 200))

    assert response.status_code == 201


@pytest.mark.parametrize(
    "path, status, code",
    [
        ("/api/v1/threads?cursor=bm90LWEtY3Vyc29y", 400, "bad_request"),
        ("/api/v1/threads?cursor=%%%", 400, "bad_request"),
        ("/api/v1/threads?limit=0", 422, "invalid_request"),
        ("/api/v1/threads?limit=101", 422, "invalid_request"),
        ("/api/v1/threads?limit=ten", 422, "invalid_request"),
        ("/api/v1/threads/1/replies?limit=0", 422, "invalid_request"),
        ("/api/v1/threads/1/replies", 404, "not_found"),
        ("/api/v1/threads/abc", 404, "not_found"),
        ("/api/v1/threads/%C2%B2", 404, "not_found"),
        ("/api/v1/threads/%E2%91%A0/replies", 404, "not_found"),
        ("/api/v1/threads?limit=%D9%A3", 422, "invalid_request"),
        ("/api/v1/threads/99999999999999999999999", 404, "not_found"),
        ("/api/v1/operations/not-a-uuid", 422, "invalid_request"),
        ("/api/v1/no-such-thing", 404, "not_found"),
    ],
)
def test_it_refuses_bad_reads_in_the_error_shape(anonymous, path, status, code):
    assert_refused(anonymous.get(path), status, code)


@pytest.mark.parametrize("path", ["/api/v1/entries/", "/api/v1/nope"])
def test_it_answers_a_post_to_an_unknown_path_with_not_found(anonymous, path):
    assert_refused(anonymous.client.post(path, {}), 404, "not_found")


def test_it_checks_the_token_before_refusing_a_body_too_large_to_read(anonymous):
    response = anonymous.post_raw(b"x" * (2 * 1024 * 1024), HTTP_AUTHORIZATION="Bearer nope")

    assert_refused(response, 401, "unauthorized")


def test_it_refuses_a_body_too_large_to_read_as_a_bad_request(anonymous):
    assert_refused(anonymous.post_raw(b"x" * (2 * 1024 * 1024)), 400, "bad_request")


def test_it_says_so_when_the_body_is_nested_too_deep(anonymous):
    error = assert_refused(anonymous.post_raw(("[" * 5000 + "]" * 5000).encode()), 400,
                           "bad_request")

    assert "nested deeper than 32 levels" in error["message"]


def test_it_answers_a_bad_host_in_the_error_shape(anonymous):
    response = anonymous.client.get("/api/v1/threads", HTTP_HOST="evil.example")

    assert_refused(response, 400, "bad_request")


def test_it_answers_method_not_allowed_in_the_error_shape(anonymous):
    response = anonymous.client.delete("/api/v1/entries")

    assert_refused(response, 405, "method_not_allowed")


def test_it_answers_an_unknown_token_on_reads_with_401(anonymous):
    response = anonymous.get("/api/v1/threads", HTTP_AUTHORIZATION="Bearer nope")

    assert_refused(response, 401, "unauthorized")
