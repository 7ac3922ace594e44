"""transport="mcp": the same outcomes through /mcp and the official SDK."""

import pytest
from live import CUT_BY_THE_DEADLINE, entries_for, new_id
from settle_client import Client, Refused, Settled, Unconfirmed

pytestmark = pytest.mark.django_db(transaction=True)

ACTOR = {"name": "mcp-test"}


def over_mcp(proxy, token, journal, **options) -> Client:
    options = {"deadline": 5.0, "attempt_timeout": 2.0, **options}
    return Client(proxy.url, token=token, journal=journal, transport="mcp", **options)


def test_a_dropped_answer_over_mcp_settles_with_one_entry(proxy, token, journal):
    proxy.reset(["drop"])
    request_id = new_id()

    settled = over_mcp(proxy, token, journal).post_question(
        "Over MCP?", f"identity {request_id}", actor=ACTOR, request_id=request_id)

    assert isinstance(settled, Settled)
    assert settled.how == "replayed"
    assert proxy.seen.writes == 2
    [entry] = entries_for(request_id)
    assert (settled.entry["id"], entry.route) == (entry.id, "mcp")


def test_a_refusal_over_mcp_is_the_same_refusal(proxy, token, journal):
    with pytest.raises(Refused) as no:
        over_mcp(proxy, token, journal).post_question("Too long?", "x" * 10_001, actor=ACTOR)

    assert (no.value.code, no.value.status) == ("invalid_request", 422)
    assert proxy.seen.writes == 1


def test_an_intent_begun_over_http_is_resumed_over_mcp_as_one_entry(proxy, token, journal):
    proxy.reset(["drop"] * 50)
    request_id = new_id()
    with pytest.raises(Unconfirmed):
        Client(proxy.url, token=token, journal=journal, deadline=1.0,
               attempt_timeout=0.5).post_question(
            "Begun over HTTP?", f"identity {request_id}", actor=ACTOR, request_id=request_id)
    proxy.reset()

    [outcome] = over_mcp(proxy, token, journal).resume()

    assert isinstance(outcome, Settled)
    assert outcome.how == "replayed"
    [entry] = entries_for(request_id)
    assert (outcome.entry["id"], outcome.entry["route"], entry.route) == (entry.id, "api", "api")


def test_paused_posting_over_mcp_looks_the_operation_up_and_stays_pending(proxy, token, journal):
    from board.services import posting_pause

    posting_pause(reason="maintenance")
    client = over_mcp(proxy, token, journal, deadline=2.0, attempt_timeout=1.0)

    with pytest.raises(Unconfirmed) as pending:
        client.post_question("Paused?", f"identity {new_id()}", actor=ACTOR)

    assert pending.value.reason in {"writes_disabled"} | CUT_BY_THE_DEADLINE
    assert proxy.seen.lookups >= 1
    assert [p.request_id for p in client.pending()] == [pending.value.request_id]
