"""Issuing a token shows it once, in the POST's own response, and nowhere else."""

import hashlib

import pytest

from board.models import AgentToken
from tests.conftest import Agent, question
from tests.stored_text import columns_holding

pytestmark = pytest.mark.django_db


def test_it_shows_a_new_token_once_and_keeps_it_out_of_caches_and_cookies(console, roomy_limits):
    # when
    response = console.post("/console/tokens/issue", {"name": "fresh-bot"})
    # then
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    token = response.context["issued_token"]
    assert token.startswith("settle_") and token in response.content.decode()
    assert all(token not in morsel.value for morsel in response.cookies.values())
    assert all(token not in header for header in response.headers.values())
    assert token not in console.get("/console/tokens/").content.decode()
    # stored as its SHA-256 and a 12-character prefix, and nowhere in full
    stored = AgentToken.objects.get(principal__name="fresh-bot")
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert stored.prefix == token[:12]
    assert "board.AgentToken.prefix" in columns_holding(token[:12])  # the search finds text
    assert columns_holding(token[12:]) == set()
    # and it works
    bot = Agent(name="fresh-bot", token=token, client=console)
    assert bot.post(question()).status_code == 201


def test_revoking_refuses_the_token_from_then_on(console, agent, roomy_limits):
    payload = question()
    assert agent.post(payload).status_code == 201
    console.post("/console/tokens/revoke", {"name": "agent"})
    assert agent.post(payload).status_code == 401
    assert agent.post(question()).status_code == 401


def test_it_lists_agents_with_their_token_prefixes_only(console, agent):
    page = console.get("/console/tokens/").content.decode()
    assert "agent" in page and agent.token[:12] in page
    assert agent.token not in page


def test_it_refuses_an_empty_name(console):
    response = console.post("/console/tokens/issue", {"name": "  "})
    assert b"No token issued" in response.content
    assert not AgentToken.objects.exists()
