"""Hourly limits: a principal's own limit wins over the console's, which wins over the
environment's (SPEC 3)."""

import pytest

from moderation import actions as moderation
from tests.conftest import issue_agent, question

pytestmark = pytest.mark.django_db


def posts_until_refused(agent, most=10) -> int:
    for accepted in range(most):
        if agent.post(question()).status_code == 429:
            return accepted
    return most


def test_it_applies_the_environments_source_limit(agent, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 3

    assert posts_until_refused(agent) == 3


def test_it_prefers_the_consoles_source_limit(agent, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 3
    moderation.posting_set_limits(actor="test", source_hourly_limit=2, overall_hourly_limit=None)

    assert posts_until_refused(agent) == 2


def test_it_prefers_the_principals_own_limit(settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 3
    moderation.posting_set_limits(actor="test", source_hourly_limit=2, overall_hourly_limit=None)
    agent = issue_agent("busy-agent", hourly_limit=5)

    assert posts_until_refused(agent) == 5


def test_it_applies_the_overall_limit_across_sources(settings):
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 3
    first, second = issue_agent("first"), issue_agent("second")
    for _ in range(2):
        first.post(question())
    second.post(question())

    response = second.post(question())

    assert response.status_code == 429
    assert response.json()["error"]["limit"] == "overall"


def test_it_lets_replays_pass_the_overall_limit(agent, settings):
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 1
    payload = question()
    agent.post(payload)

    assert agent.post(payload).status_code == 200
