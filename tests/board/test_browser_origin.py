"""SPEC 5 `403 forbidden` and 5.1 step 0: a browser page on another origin may not make
its visitors post; agents (no `Origin`) and Settle's own pages post as before."""

import json

import pytest

from board.models import HourlyCounter
from tests.conftest import counts, question
from tests.production.test_metrics import posts

pytestmark = pytest.mark.django_db

FOREIGN = "https://evil.example"


def forbidden_count(client) -> float:
    return posts(client.get("/metrics").content.decode()).get("forbidden", 0)


def test_a_foreign_origin_is_refused_and_nothing_is_written(anonymous):
    response = anonymous.post(question(), HTTP_ORIGIN=FOREIGN)

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert response.json()["error"]["message"]
    assert counts() == {"entries": 0, "receipts": 0, "tombstones": 0, "attempts": 0}


def test_a_foreign_origin_spends_no_rate_limit_unit(anonymous, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 1
    for _ in range(3):
        anonymous.post(question(), HTTP_ORIGIN=FOREIGN)

    assert HourlyCounter.objects.count() == 0
    assert anonymous.post(question()).status_code == 201


def test_a_foreign_origin_is_counted_as_forbidden(anonymous, client):
    before = forbidden_count(client)

    anonymous.post(question(), HTTP_ORIGIN=FOREIGN)

    assert forbidden_count(client) == before + 1


def test_null_is_never_allowed(anonymous, settings):
    settings.SETTLE_API_ALLOWED_ORIGINS = ["null"]

    assert anonymous.post(question(), HTTP_ORIGIN="null").status_code == 403
    assert counts()["entries"] == 0


def test_settles_own_origin_from_the_host_may_post(anonymous, settings):
    settings.SETTLE_PUBLIC_URL = ""

    response = anonymous.post(question(), HTTP_ORIGIN="http://testserver")

    assert response.status_code == 201
    assert counts()["entries"] == 1


def test_the_host_origin_uses_the_scheme_settle_decided(anonymous, settings):
    settings.SETTLE_PUBLIC_URL = ""

    # Plain http from an untrusted peer: an https Origin is not Settle's own.
    response = anonymous.post(question(), HTTP_ORIGIN="https://testserver")

    assert response.status_code == 403


def test_settles_public_url_origin_may_post(anonymous, settings):
    settings.SETTLE_PUBLIC_URL = "https://board.example/settle"

    response = anonymous.post(question(), HTTP_ORIGIN="https://board.example")

    assert response.status_code == 201


def test_with_a_public_url_the_request_host_is_not_settles_origin(anonymous, settings):
    settings.SETTLE_PUBLIC_URL = "https://board.example"

    assert anonymous.post(question(), HTTP_ORIGIN="http://testserver").status_code == 403


def test_an_allowed_origin_may_post_compared_as_browsers_serialize(anonymous, settings):
    settings.SETTLE_API_ALLOWED_ORIGINS = ["HTTPS://Tools.Example:443"]

    response = anonymous.post(question(), HTTP_ORIGIN="https://tools.example")

    assert response.status_code == 201
    assert counts()["entries"] == 1


def test_an_allowed_origin_keeps_a_non_default_port(anonymous, settings):
    settings.SETTLE_API_ALLOWED_ORIGINS = ["https://tools.example:8443"]

    assert anonymous.post(question(), HTTP_ORIGIN="https://tools.example").status_code == 403
    assert (
        anonymous.post(question(), HTTP_ORIGIN="https://tools.example:8443").status_code == 201
    )


def test_a_post_without_origin_is_saved_as_before(agent):
    response = agent.post(question())

    assert response.status_code == 201
    assert counts()["entries"] == 1


def test_a_read_takes_any_origin(agent):
    response = agent.get("/api/v1/threads", HTTP_ORIGIN=FOREIGN)

    assert response.status_code == 200


def test_a_request_id_from_a_foreign_origin_is_refused(agent):
    response = agent.client.post(
        "/api/v1/request-ids", HTTP_ORIGIN=FOREIGN,
        HTTP_AUTHORIZATION=f"Bearer {agent.token}",
    )

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_a_foreign_origin_is_refused_before_the_token(anonymous):
    response = anonymous.post(
        question(), HTTP_ORIGIN=FOREIGN, HTTP_AUTHORIZATION="Bearer not-a-token"
    )

    assert response.status_code == 403
    assert json.loads(response.content)["error"]["code"] == "forbidden"
