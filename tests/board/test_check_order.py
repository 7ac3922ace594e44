"""SPEC 5.1's checks run in a fixed order: for each adjacent pair of steps, a request that
would fail both gets the earlier step's answer, and the database shows what was written."""

import pytest

from board.models import HourlyCounter
from moderation import actions as moderation
from tests.conftest import counts, question, reply

pytestmark = pytest.mark.django_db


def exhaust_source_limit(agent, settings, limit=2):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = limit
    for _ in range(limit):
        assert agent.post(question()).status_code == 201


# --- step 1 (token, shape) before step 2 (source limit) ----------------------------------


def test_it_answers_401_before_the_source_limit(anonymous, settings):
    exhaust_source_limit(anonymous, settings)
    before = counts()

    response = anonymous.post(question(), HTTP_AUTHORIZATION="Bearer not-a-token")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert counts() == before


def test_it_answers_422_before_the_source_limit(agent, settings):
    exhaust_source_limit(agent, settings)
    before = counts()

    response = agent.post(question(body=""))

    assert response.status_code == 422
    assert counts() == before


def test_it_counts_shape_refusals_against_the_client_address(anonymous, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 2
    anonymous.post_raw(b"not json")
    anonymous.post(question(body=""))

    response = anonymous.post(question())

    assert response.status_code == 429
    assert counts()["receipts"] == 0


def console_source_limit(settings, limit: int) -> None:
    # The environment's limit far away: a refused caller is counted under the console's.
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 100
    moderation.posting_set_limits(
        actor="test", source_hourly_limit=limit, overall_hourly_limit=None
    )


def test_it_counts_each_unknown_token_refusal_once_against_the_client_address(
    anonymous, settings
):
    console_source_limit(settings, 3)
    for _ in range(2):
        refused = anonymous.post(question(), HTTP_AUTHORIZATION="Bearer not-a-token")
        assert refused.status_code == 401

    # then: one slot is left of three, so each refusal counted once
    assert anonymous.post(question()).status_code == 201
    assert anonymous.post(question()).status_code == 429
    assert counts()["receipts"] == 1


def test_it_counts_each_post_without_a_required_token_once_against_the_client_address(
    anonymous, settings
):
    console_source_limit(settings, 3)
    settings.SETTLE_ALLOW_ANONYMOUS = False
    for _ in range(2):
        assert anonymous.post(question()).status_code == 401
    settings.SETTLE_ALLOW_ANONYMOUS = True

    assert anonymous.post(question()).status_code == 201
    assert anonymous.post(question()).status_code == 429
    assert counts()["receipts"] == 1


# --- step 2 (source limit) before step 3 (the saved request) -----------------------------


def test_it_refuses_a_retry_over_the_source_limit(agent, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 1
    payload = question()
    agent.post(payload)
    before = counts()

    response = agent.post(payload)

    assert response.status_code == 429
    error = response.json()["error"]
    assert error["limit"] == "source"
    assert int(response["Retry-After"]) == error["retry_after_seconds"] > 0
    assert counts() == {**before, "attempts": before["attempts"] + 1}


def test_it_does_not_count_what_the_source_limit_refused(agent, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 1
    agent.post(question())
    for _ in range(3):
        agent.post(question())

    assert HourlyCounter.objects.get(source__startswith="principal:").count == 1


# --- step 3 (the saved request) before step 4 (posting paused) ---------------------------


def test_it_replays_a_saved_request_while_posting_is_paused(agent):
    payload = question()
    first = agent.post(payload).json()
    moderation.posting_pause(actor="test", reason="maintenance window")

    response = agent.post(payload)

    assert response.status_code == 200
    assert response.json()["id"] == first["id"]


def test_it_replays_a_hidden_entry_as_not_visible(agent):
    payload = question()
    first = agent.post(payload).json()
    moderation.entry_hide(actor="test", entry_id=first["id"], reason="spam check")

    response = agent.post(payload)

    assert response.status_code == 200
    assert response.json()["visible"] is False
    assert response.json()["body"] == payload["body"]


def test_it_answers_deleted_and_does_not_recreate(agent):
    payload = question()
    first = agent.post(payload).json()
    moderation.entry_delete(actor="test", entry_id=first["id"], reason="abuse")
    moderation.posting_pause(actor="test", reason="also paused")

    response = agent.post(payload)

    assert response.status_code == 410
    assert response.json()["error"]["code"] == "deleted"
    assert counts()["entries"] == 1
    assert counts()["receipts"] == 1


def test_it_answers_a_conflict_while_paused(agent):
    payload = question()
    agent.post(payload)
    moderation.posting_pause(actor="test", reason="paused")

    response = agent.post({**payload, "title": "Another title"})

    assert response.status_code == 409
    assert response.json()["error"]["conflicting_fields"] == ["title"]
    assert counts()["entries"] == 1


# --- step 4 (paused) before step 5 (overall limit) ---------------------------------------


def test_it_answers_paused_before_the_overall_limit(agent, settings):
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 0
    moderation.posting_pause(actor="test", reason="Reindexing until 14:00 UTC")

    response = agent.post(question())

    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "writes_disabled"
    assert error["message"] == "Reindexing until 14:00 UTC"
    assert response["Retry-After"] == str(error["retry_after_seconds"])
    assert counts()["receipts"] == 0


# --- step 5 (overall limit) before step 6 (parent) ---------------------------------------


def test_it_answers_the_overall_limit_before_checking_the_parent(agent, settings):
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 1
    agent.post(question())

    response = agent.post(reply(parent_id=999_999))

    assert response.status_code == 429
    assert response.json()["error"]["limit"] == "overall"
    assert counts()["receipts"] == 1


# --- step 6 (parent) before step 7 (save) ------------------------------------------------


def test_it_refuses_a_reply_to_a_missing_parent_and_writes_no_receipt(agent):
    response = agent.post(reply(parent_id=999_999))

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "parent_unavailable"
    assert counts()["entries"] == 0
    assert counts()["receipts"] == 0


def test_it_refuses_a_reply_to_a_reply(agent):
    parent = agent.post(question()).json()
    child = agent.post(reply(parent["id"])).json()

    response = agent.post(reply(child["id"]))

    assert response.json()["error"]["code"] == "parent_unavailable"
    assert counts()["entries"] == 2


def test_it_refuses_a_reply_to_a_hidden_question(agent):
    parent = agent.post(question()).json()
    moderation.entry_hide(actor="test", entry_id=parent["id"], reason="hidden")

    response = agent.post(reply(parent["id"]))

    assert response.json()["error"]["code"] == "parent_unavailable"


# --- a refused request never began ----------------------------------------------------------


def test_it_judges_a_refused_request_afresh_on_retry(agent):
    payload = question()
    moderation.posting_pause(actor="test", reason="paused")
    assert agent.post(payload).status_code == 503
    moderation.posting_resume(actor="test", reason="resumed")

    response = agent.post(payload)

    assert response.status_code == 201
    assert counts()["entries"] == 1
