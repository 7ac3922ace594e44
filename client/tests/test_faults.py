"""The client against a live Settle through faults: exactly one entry, or none and pending."""

import pytest
from live import CUT_BY_THE_DEADLINE, entries_for, new_id
from settle_client import Client, Settled, Unconfirmed

pytestmark = pytest.mark.django_db(transaction=True)

ACTOR = {"name": "fault-test"}


def client_for(proxy, token, journal, **options) -> Client:
    options = {"deadline": 4.0, "attempt_timeout": 1.0, **options}
    return Client(proxy.url, token=token, journal=journal, **options)


def post(client: Client, request_id: str, **options):
    return client.post_question("Did it land?", f"identity {request_id}", actor=ACTOR,
                                request_id=request_id, **options)


@pytest.mark.parametrize("fault", ["drop", "reset", "hold"])
def test_one_fault_then_an_answer_settles_with_exactly_one_entry(proxy, token, journal, fault):
    proxy.reset([fault])
    request_id = new_id()

    settled = post(client_for(proxy, token, journal), request_id)

    assert isinstance(settled, Settled)
    assert proxy.seen.writes == 2
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id
    assert settled.how == ("created" if fault == "reset" else "replayed")
    assert client_for(proxy, token, journal).pending() == []


@pytest.mark.parametrize("fault", ["drop", "reset", "hold"])
def test_faults_past_the_deadline_leave_it_unconfirmed_and_resume_settles_it(
    proxy, token, journal, fault
):
    proxy.reset([fault] * 50)
    request_id = new_id()
    client = client_for(proxy, token, journal, deadline=2.5)

    with pytest.raises(Unconfirmed) as pending:
        post(client, request_id)

    assert pending.value.request_id == request_id
    assert pending.value.reason in {"ReadTimeout", "ReadError", "RemoteProtocolError"}
    assert [p.request_id for p in client.pending()] == [request_id]
    assert len(entries_for(request_id)) == (0 if fault == "reset" else 1)

    proxy.reset([])
    [outcome] = client.resume()

    assert isinstance(outcome, Settled)
    [entry] = entries_for(request_id)
    assert outcome.entry["id"] == entry.id
    assert client.pending() == []


def test_a_429_after_the_entry_was_saved_settles_by_lookup_without_another_post(
    proxy, transactional_db, journal
):
    from board.services import token_issue

    _, token = token_issue(name="one-an-hour", hourly_limit=1)
    proxy.reset(["drop"])  # the first attempt is saved, its answer lost; the second is 429
    request_id = new_id()

    settled = post(client_for(proxy, token, journal), request_id)

    assert settled.how == "looked_up"
    assert proxy.seen.writes == 2
    assert proxy.seen.lookups == 1
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id


def test_paused_posting_is_unconfirmed_at_the_deadline_and_resume_settles_it_later(
    proxy, token, journal
):
    from board.services import posting_pause, posting_resume

    posting_pause(reason="maintenance")
    request_id = new_id()
    client = client_for(proxy, token, journal, deadline=2.0)

    with pytest.raises(Unconfirmed) as pending:
        post(client, request_id)

    assert pending.value.reason in {"writes_disabled"} | CUT_BY_THE_DEADLINE
    assert proxy.seen.lookups >= 1
    assert entries_for(request_id) == []

    posting_resume(reason="done")
    [outcome] = client.resume()

    assert outcome.how == "created"
    assert len(entries_for(request_id)) == 1
