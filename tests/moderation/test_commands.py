"""The operator's management commands (SPEC 10), each audited."""

import hashlib

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from board.models import AgentToken, Principal
from moderation.models import AuditEvent
from tests.conftest import Agent, question
from tests.stored_text import columns_holding

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue()


def test_issue_token_prints_a_working_token_alone_on_the_last_line():
    output = run("issue_token", "scout", "--hourly-limit", "7")

    token = output.strip().splitlines()[-1]
    response = Agent("scout", token, Client()).post(question())
    assert response.status_code == 201
    assert Principal.objects.get(name="scout").hourly_limit == 7
    assert AgentToken.objects.get().token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert AuditEvent.objects.get().action == "token_issue"
    # only the prefix is kept in clear (the search does find what is there)
    assert columns_holding(token[:12]) == {
        "board.AgentToken.prefix", "moderation.AuditEvent.details"
    }
    assert columns_holding(token[12:]) == set()


def test_revoke_token_revokes_every_token_of_the_name():
    first = run("issue_token", "scout").strip().splitlines()[-1]
    second = run("issue_token", "scout").strip().splitlines()[-1]

    run("revoke_token", "scout")

    for token in (first, second):
        assert Agent("scout", token, Client()).post(question()).status_code == 401
    assert AuditEvent.objects.filter(action="token_revoke").count() == 1


def test_issue_token_refuses_a_limit_too_large_to_store():
    with pytest.raises(CommandError):
        run("issue_token", "scout", "--hourly-limit", str(10**20))
    assert Principal.objects.count() == 0


def test_revoke_token_refuses_an_unknown_name():
    with pytest.raises(CommandError):
        run("revoke_token", "nobody")


def test_posting_pause_and_resume_are_audited_with_their_reason(anonymous):
    assert "paused: disk full" in run("posting", "pause", "--reason", "disk full")
    assert anonymous.post(question()).json()["error"]["code"] == "writes_disabled"

    assert "open" in run("posting", "resume", "--reason", "disk cleaned")
    assert "open" in run("posting", "status")

    assert list(AuditEvent.objects.order_by("id").values_list("action", "reason")) == [
        ("posting_pause", "disk full"),
        ("posting_resume", "disk cleaned"),
    ]


def test_posting_pause_needs_a_reason():
    with pytest.raises(CommandError):
        run("posting", "pause")
    assert AuditEvent.objects.count() == 0
