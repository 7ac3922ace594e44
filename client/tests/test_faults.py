"""The client against a live Settle through faults, over HTTP and over MCP: exactly one
entry and Settled, or none or one and Unconfirmed until resume() settles it."""

import time

import pytest
from live import CUT_BY_THE_DEADLINE, TIMINGS, client_for, entries_for, new_id
from settle_client import Client, Settled, Unconfirmed

pytestmark = pytest.mark.django_db(transaction=True)

ACTOR = {"name": "fault-test"}
FAULTS = ["drop", "reset", "hold", "trickle"]
# What a fault leaves on the server: reset forwards nothing; the others forward the write.
SAVED = {"drop": True, "reset": False, "hold": True, "trickle": True}


def post(client: Client, request_id: str, **options):
    return client.post_question("Did it land?", f"identity {request_id}", actor=ACTOR,
                                request_id=request_id, **options)


@pytest.mark.parametrize("fault", FAULTS)
def test_one_fault_then_an_answer_settles_with_exactly_one_entry(
    proxy, token, journal, transport, fault
):
    proxy.reset([fault])
    request_id = new_id()

    settled = post(client_for(proxy, token, journal, transport), request_id)

    assert isinstance(settled, Settled)
    assert proxy.seen.writes == 2
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id
    assert settled.how == ("replayed" if SAVED[fault] else "created")
    assert entry.route == ("api" if transport == "http" else "mcp")
    assert client_for(proxy, token, journal, transport).pending() == []


@pytest.mark.parametrize("fault", FAULTS)
def test_faults_past_the_deadline_leave_it_unconfirmed_and_resume_settles_it(
    proxy, token, journal, transport, fault
):
    proxy.reset([fault] * 50)
    request_id = new_id()
    deadline = TIMINGS[transport]["deadline"] - 1.5
    client = client_for(proxy, token, journal, transport, deadline=deadline)

    began = time.monotonic()
    with pytest.raises(Unconfirmed) as pending:
        post(client, request_id)
    took = time.monotonic() - began

    # A trickled answer never keeps one read waiting long: only a bound on the whole
    # attempt ends it, and the deadline holds.
    assert took < deadline + 1.0
    assert pending.value.request_id == request_id
    assert pending.value.reason in {"ReadError", "RemoteProtocolError", "MCPError"} | (
        CUT_BY_THE_DEADLINE)
    assert [p.request_id for p in client.pending()] == [request_id]
    assert len(entries_for(request_id)) == (1 if SAVED[fault] else 0)

    proxy.reset([])
    [outcome] = client.resume()

    assert isinstance(outcome, Settled)
    [entry] = entries_for(request_id)
    assert outcome.entry["id"] == entry.id
    assert outcome.how == ("replayed" if SAVED[fault] else "created")
    assert client.pending() == []


def test_a_429_after_the_entry_was_saved_settles_by_lookup_without_another_post(
    proxy, transactional_db, journal, transport
):
    from board.services import token_issue

    _, token = token_issue(name="one-an-hour", hourly_limit=1)
    proxy.reset(["drop"])  # the first attempt is saved, its answer lost; the second is 429
    request_id = new_id()

    settled = post(client_for(proxy, token, journal, transport), request_id)

    assert settled.how == "looked_up"
    assert proxy.seen.writes == 2
    assert proxy.seen.lookups == 1
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id


def test_posting_paused_after_the_entry_was_saved_settles_it_with_no_other_entry(
    proxy, token, journal, transport
):
    """A saved identity is matched (step 3) before the pause is read (step 4), so the retry
    made while posting is paused replays the entry."""
    from django.db import connection

    from board.services import posting_pause

    def pause() -> None:
        posting_pause(reason="maintenance")
        connection.close()  # the proxy thread's own connection

    proxy.on_forwarded = pause
    proxy.reset(["drop"])
    request_id = new_id()

    settled = post(client_for(proxy, token, journal, transport), request_id)

    assert settled.how == "replayed"
    assert proxy.seen.writes == 2
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id


def test_paused_posting_is_unconfirmed_at_the_deadline_and_resume_settles_it_later(
    proxy, token, journal, transport
):
    from board.services import posting_pause, posting_resume

    posting_pause(reason="maintenance")
    request_id = new_id()
    deadline = 4.0
    client = client_for(proxy, token, journal, transport, deadline=deadline)

    began = time.monotonic()
    with pytest.raises(Unconfirmed) as pending:
        post(client, request_id)
    took = time.monotonic() - began

    assert deadline * 0.9 <= took <= deadline * 1.1
    assert pending.value.reason in {"writes_disabled"} | CUT_BY_THE_DEADLINE
    assert proxy.seen.writes >= 2
    assert proxy.seen.lookups >= 1  # after each 503 writes_disabled, before waiting
    assert entries_for(request_id) == []
    assert [p.request_id for p in client.pending()] == [request_id]

    posting_resume(reason="done")
    [outcome] = client.resume()

    assert outcome.how == "created"
    assert len(entries_for(request_id)) == 1
    assert client.pending() == []
