"""A persistent PostgreSQL connection is health-checked when it comes back from idling,
and not between back-to-back requests (board/serving/postgresql/base.py says why).

Each test kills the connection's backend from another session, then plays the request
boundary Django's handler plays (`close_if_unusable_or_obsolete`, at a request's end and
at the next one's start; the test client leaves it out).
"""

import time

import pytest
from django.db import connection
from django.test import Client

from tests.conftest import counts, other_connection, question

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def backend_killed() -> None:
    killer = other_connection()
    try:
        killer.execute(
            "SELECT pg_terminate_backend(%s, 5000)", [connection.connection.info.backend_pid]
        )
    finally:
        killer.close()


def request_boundary() -> None:
    connection.close_if_unusable_or_obsolete()


def backend_dies_after_a_post(agent, settings, *, idle_allowance: int) -> None:
    """A post opens the connection and ends its request; then its backend is killed."""
    settings.SETTLE_DB_HEALTH_CHECK_IDLE_SECONDS = idle_allowance
    assert agent.post(question()).status_code == 201
    request_boundary()
    backend_killed()


def test_a_connection_back_from_idling_is_checked_and_replaced(agent, settings):
    # given: a post opened the connection, whose backend then dies while it idles
    backend_dies_after_a_post(agent, settings, idle_allowance=1)
    time.sleep(1.1)

    # when
    request_boundary()
    response = agent.post(question())

    # then: the check found the dead connection, so the post ran on a new one
    assert response.status_code == 201
    assert counts()["entries"] == 2


def test_a_connection_in_steady_use_is_not_probed_and_a_break_costs_one_clean_refusal(
    agent, settings
):
    # given: the backend dies between two back-to-back requests
    backend_dies_after_a_post(agent, settings, idle_allowance=1)

    # when: the next request starts at once, then the one after it
    request_boundary()
    broken = agent.post(question())
    request_boundary()
    request_boundary()
    after = agent.post(question())

    # then: no probe ran, so the first statement met the break: a 503 that wrote
    # nothing; Django dropped the connection and the next request got a new one
    assert broken.status_code == 503
    assert broken.json()["error"]["outcome"] == "not_committed"
    assert after.status_code == 201
    assert counts()["entries"] == 2


def test_with_the_idle_allowance_at_zero_every_request_is_checked(agent, settings):
    # given
    backend_dies_after_a_post(agent, settings, idle_allowance=0)

    # when
    request_boundary()
    response = agent.post(question())

    # then
    assert response.status_code == 201


def test_readiness_checks_a_kept_connection_even_in_steady_use(agent, settings):
    # given: the backend of a connection used a moment ago dies
    backend_dies_after_a_post(agent, settings, idle_allowance=1)

    # when: a probe asks at once
    request_boundary()
    response = Client().get("/readyz")

    # then: it replaced the dead connection and found the database answering
    assert response.status_code == 200
    assert response.json() == {"status": "ready"}
