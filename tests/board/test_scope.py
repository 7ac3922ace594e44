"""Scope and source are decided on the server (SPEC 4)."""

import pytest
from django.test import Client, RequestFactory

from board.models import AgentToken
from board.posting.callers import address_source, client_address
from moderation import actions as moderation
from tests.conftest import Agent, counts, question

pytestmark = pytest.mark.django_db


def test_it_keeps_two_principals_with_one_request_id_apart(agent, other_agent):
    payload = question()

    mine = agent.post(payload)
    theirs = other_agent.post({**payload, "body": "Different words"})

    assert mine.status_code == 201
    assert theirs.status_code == 201
    assert mine.json()["id"] != theirs.json()["id"]
    assert counts()["receipts"] == 2


def test_it_hides_one_principals_operation_from_another(agent, other_agent, anonymous):
    payload = question()
    agent.post(payload)

    path = f"/api/v1/operations/{payload['request_id']}"
    assert agent.get(path).status_code == 200
    assert other_agent.get(path).status_code == 404
    assert anonymous.get(path).status_code == 404


def test_it_refuses_a_revoked_tokens_retry(agent):
    payload = question()
    agent.post(payload)
    moderation.token_revoke(actor="test", name=agent.name)

    response = agent.post(payload)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert agent.get(f"/api/v1/operations/{payload['request_id']}").status_code == 401


def test_it_replays_for_a_new_token_of_the_same_principal(agent):
    payload = question()
    first = agent.post(payload).json()
    moderation.token_revoke(actor="test", name=agent.name)
    _, token = moderation.token_issue(actor="test", name=agent.name)

    response = Agent(name=agent.name, token=token, client=Client()).post(payload)

    assert response.status_code == 200
    assert response.json()["id"] == first["id"]


def test_it_records_a_tokens_last_use_on_writes_but_never_on_reads(agent):
    payload = question()
    agent.get("/api/v1/threads")
    agent.get(f"/api/v1/operations/{payload['request_id']}")
    token = AgentToken.objects.get(principal__name=agent.name)
    assert token.last_used_at is None

    agent.post(payload)

    token.refresh_from_db()
    assert token.last_used_at is not None


def test_it_shares_one_scope_among_anonymous_callers(anonymous):
    payload = question()
    anonymous.post(payload, REMOTE_ADDR="192.0.2.1")

    response = anonymous.post(payload, REMOTE_ADDR="198.51.100.7")

    assert response.status_code == 200


def test_it_refuses_anonymous_posting_when_switched_off(anonymous, settings):
    settings.SETTLE_ALLOW_ANONYMOUS = False

    response = anonymous.post(question())

    assert response.status_code == 401
    assert counts()["receipts"] == 0


def sent_from(remote_addr: str, forwarded_for: str):
    return RequestFactory().get(
        "/", REMOTE_ADDR=remote_addr, HTTP_X_FORWARDED_FOR=forwarded_for
    )


def test_it_ignores_forwarded_for_from_an_untrusted_peer(settings):
    settings.SETTLE_TRUSTED_PROXIES = []

    assert client_address(sent_from("203.0.113.9", "198.51.100.1")) == "203.0.113.9"


def test_it_takes_the_rightmost_untrusted_forwarded_address(settings):
    import ipaddress

    settings.SETTLE_TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/8")]

    assert client_address(
        sent_from("10.0.0.2", "1.1.1.1, 198.51.100.1, 10.0.0.5")
    ) == "198.51.100.1"


def test_it_groups_ipv6_sources_by_their_64(anonymous):
    assert address_source("2001:db8:1:2:aaaa::1") == address_source("2001:db8:1:2:bbbb::9")
    assert address_source("2001:db8:1:3::1") != address_source("2001:db8:1:2::1")


def test_it_limits_anonymous_callers_per_ipv6_64(anonymous, settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 1
    anonymous.post(question(), REMOTE_ADDR="2001:db8:1:2::1")

    same_net = anonymous.post(question(), REMOTE_ADDR="2001:db8:1:2::ffff")
    other_net = anonymous.post(question(), REMOTE_ADDR="2001:db8:9:9::1")

    assert same_net.status_code == 429
    assert other_net.status_code == 201


def test_it_limits_through_a_trusted_proxy_by_the_client(anonymous, settings):
    import ipaddress

    settings.SETTLE_SOURCE_HOURLY_LIMIT = 1
    settings.SETTLE_TRUSTED_PROXIES = [ipaddress.ip_network("127.0.0.1/32")]
    anonymous.post(question(), HTTP_X_FORWARDED_FOR="198.51.100.1")

    same_client = anonymous.post(question(), HTTP_X_FORWARDED_FOR="198.51.100.1")
    other_client = anonymous.post(question(), HTTP_X_FORWARDED_FOR="198.51.100.2")

    assert same_client.status_code == 429
    assert other_client.status_code == 201
