"""Final answers are refusals, raised at once and never retried, over HTTP and over MCP:
after the refusing answer the proxy sees no other write and no lookup."""

import pytest
from live import client_for, entries_for, new_id, post_long_ago, question_request
from settle_client import Refused

pytestmark = pytest.mark.django_db(transaction=True)

ACTOR = {"name": "refusal-test"}
TITLE = "Is this final?"


def ask(client, request_id: str, body: str | None = None):
    return client.post_question(TITLE, body or f"identity {request_id}", actor=ACTOR,
                                request_id=request_id)


def assert_asked_once(proxy) -> None:
    assert (proxy.seen.writes, proxy.seen.lookups) == (1, 0)


def test_other_content_under_a_saved_id_is_refused_as_a_conflict(
    proxy, token, tmp_path, transport
):
    request_id = new_id()
    first = ask(client_for(proxy, token, tmp_path / "one.sqlite3"), request_id)
    proxy.reset()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, tmp_path / "two.sqlite3", transport), request_id,
            body=f"identity {request_id}, other words")

    assert (no.value.code, no.value.status) == ("conflict", 409)
    assert no.value.details["conflicting_fields"] == ["body"]
    assert no.value.details["existing_id"] == first.entry["id"]
    assert_asked_once(proxy)
    assert len(entries_for(request_id)) == 1


def test_a_retry_of_a_deleted_entry_is_refused_as_deleted(proxy, token, tmp_path, transport):
    from board.services import entry_delete

    request_id = new_id()
    first = ask(client_for(proxy, token, tmp_path / "one.sqlite3"), request_id)
    entry_delete(entry_id=first.entry["id"])
    proxy.reset()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, tmp_path / "two.sqlite3", transport), request_id)

    assert (no.value.code, no.value.status) == ("deleted", 410)
    assert_asked_once(proxy)


def test_a_retry_after_the_receipt_expired_is_refused_as_expired(
    proxy, transactional_db, journal, transport
):
    """The principal keeps its entries an hour (issue_token --retention 1h); the first
    attempt was saved two hours ago and its answer lost."""
    from board.services import token_issue

    _, token = token_issue(name="keeps-an-hour", entry_retention=3600)
    request_id = new_id()
    post_long_ago(token, question_request(request_id, TITLE, f"identity {request_id}", ACTOR),
                  hours=2)

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, journal, transport), request_id)

    assert (no.value.code, no.value.status) == ("expired", 410)
    assert_asked_once(proxy)
    assert len(entries_for(request_id)) == 1  # the old one, not recreated
    assert client_for(proxy, token, journal, transport).pending() == []


def test_a_lookup_after_a_429_that_says_expired_is_refused_as_expired(
    proxy, transactional_db, journal, transport
):
    """One write an hour, spent; the intent's receipt expired an hour ago: the 429 sends
    the client to look it up, and the lookup's `expired` is final."""
    from board.services import token_issue

    _, token = token_issue(name="keeps-an-hour", hourly_limit=1, entry_retention=3600)
    request_id = new_id()
    post_long_ago(token, question_request(request_id, TITLE, f"identity {request_id}", ACTOR),
                  hours=2)
    post_long_ago(token, question_request(new_id(), TITLE, "this hour's write", ACTOR),
                  hours=0)

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, journal, transport), request_id)

    assert (no.value.code, no.value.status) == ("expired", 410)
    assert (proxy.seen.writes, proxy.seen.lookups) == (1, 1)


def test_an_invalid_request_is_refused_with_its_fields(proxy, token, journal, transport):
    request_id = new_id()
    client = client_for(proxy, token, journal, transport)

    with pytest.raises(Refused) as no:
        ask(client, request_id, body="x" * 10_001)

    assert (no.value.code, no.value.status) == ("invalid_request", 422)
    assert no.value.details["fields"][0]["field"] == "body"
    assert_asked_once(proxy)
    assert client.pending() == []


def test_an_unknown_token_is_refused_as_unauthorized(
    proxy, transactional_db, journal, transport
):
    request_id = new_id()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, "settle_not-a-real-token", journal, transport), request_id)

    assert (no.value.code, no.value.status) == ("unauthorized", 401)
    # /mcp refuses the token before any tool is called: the SDK's handshake (discover,
    # then the legacy initialize) is refused, and no tool call follows.
    assert (proxy.seen.writes, proxy.seen.lookups) == ((1 if transport == "http" else 0), 0)
    assert proxy.seen.requests == (1 if transport == "http" else 2)
    assert entries_for(request_id) == []


def test_a_browser_origin_is_refused_as_forbidden(proxy, token, journal, transport):
    proxy.reset(["origin"])
    request_id = new_id()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, journal, transport), request_id)

    assert (no.value.code, no.value.status) == ("forbidden", 403)
    assert_asked_once(proxy)
    assert entries_for(request_id) == []


def test_a_refusal_is_recorded_and_answered_again_without_sending(proxy, token, journal):
    request_id = new_id()
    with pytest.raises(Refused):
        ask(client_for(proxy, token, journal), request_id, body="x" * 10_001)
    proxy.reset()

    with pytest.raises(Refused) as again:
        ask(client_for(proxy, token, journal), request_id, body="x" * 10_001)

    assert again.value.code == "invalid_request"
    assert proxy.seen.requests == 0


def test_a_journaled_id_with_other_content_is_a_value_error_and_nothing_is_sent(
    proxy, token, journal
):
    request_id = new_id()
    ask(client_for(proxy, token, journal), request_id)
    proxy.reset()

    with pytest.raises(ValueError):
        ask(client_for(proxy, token, journal), request_id, body="other words")

    assert proxy.seen.requests == 0
    assert len(entries_for(request_id)) == 1


def test_a_request_id_that_is_not_a_uuid_is_sent_and_refused_by_the_server(
    proxy, token, journal
):
    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, journal), "not-a-uuid")

    assert (no.value.code, no.value.status) == ("invalid_request", 422)
    assert_asked_once(proxy)


def test_an_id_the_server_does_not_take_is_sent_as_given_and_refused(
    proxy, token, journal, transport
):
    request_id = "{" + new_id() + "}"  # a UUID, in a form the server refuses
    client = client_for(proxy, token, journal, transport)

    with pytest.raises(Refused) as no:
        ask(client, request_id)

    assert (no.value.code, no.value.status) == ("invalid_request", 422)
    assert no.value.details["fields"][0]["field"] == "request_id"
    assert no.value.request_id == request_id
    assert_asked_once(proxy)
    assert entries_for(request_id.strip("{}")) == []
