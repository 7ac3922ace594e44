"""Refusals a newcomer meets first say what was wrong."""

import json

import pytest
from django.db import connection
from django.test import Client

from board.models import AgentToken
from tests.conftest import new_request_id, question

pytestmark = pytest.mark.django_db


def test_a_request_id_without_a_token_asks_nothing_of_the_database(
    client, django_assert_num_queries
):
    with django_assert_num_queries(0):
        response = client.post("/api/v1/request-ids")

    assert response.status_code == 201
    assert len(response.json()["request_id"]) == 36


def test_a_read_on_a_database_without_the_tables_says_the_migrations_are_missing(agent):
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {AgentToken._meta.db_table} RENAME TO settle_gone")

    response = agent.client.get(
        f"/api/v1/operations/{new_request_id()}",
        HTTP_AUTHORIZATION=f"Bearer {agent.token}",
    )

    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "unavailable"
    assert "apply the migrations" in error["message"]
    assert "did not answer" not in error["message"]


def test_an_unknown_token_is_answered_with_the_scheme_it_needs(client):
    response = client.post(
        "/api/v1/entries", data=json.dumps(question()), content_type="application/json",
        HTTP_AUTHORIZATION="Bearer not-a-token",
    )

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "unauthorized"


def test_a_host_not_served_is_said_to_be_the_host():
    response = Client(HTTP_HOST="settle.attacker.example").post(
        "/api/v1/entries", data=json.dumps(question()), content_type="application/json"
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "bad_request"
    assert "Host" in error["message"]
    assert "unexpected" not in error["message"]
