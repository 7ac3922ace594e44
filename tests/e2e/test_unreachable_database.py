"""A database that cannot be reached: every call answers 503 in the error shape, a post
says truthfully that nothing was saved, and nothing answers 500 (SPEC 5.1, 11.5)."""

import json
import urllib.error
import urllib.request

import pytest

from tests.conftest import question

# Port 9 (discard) has no PostgreSQL behind it: every connection attempt is refused.
UNREACHABLE = {"DATABASE_URL": "postgres://settle@127.0.0.1:9/settle"}

pytestmark = pytest.mark.parametrize("gunicorn", [UNREACHABLE], indirect=True)


def call(request: urllib.request.Request) -> tuple[int, dict, dict]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_a_post_answers_not_committed(gunicorn):
    status, headers, body = call(urllib.request.Request(
        f"{gunicorn}/api/v1/entries", data=json.dumps(question()).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    ))

    assert status == 503
    assert body["error"]["code"] == "unavailable"
    assert body["error"]["outcome"] == "not_committed"
    assert headers["Retry-After"] == str(body["error"]["retry_after_seconds"])


READS = ["/api/v1/threads", f"/api/v1/operations/{question()['request_id']}"]


@pytest.mark.parametrize("path", READS)
def test_a_read_answers_unavailable_without_talking_of_writes(gunicorn, path):
    status, headers, body = call(urllib.request.Request(f"{gunicorn}{path}"))

    assert status == 503
    assert body["error"]["code"] == "unavailable"
    assert "nothing was changed" in body["error"]["message"]
    assert "Retry-After" in headers
