"""Final answers are refusals, raised once, never retried; nothing is checked locally."""

import pytest
from django.conf import settings
from live import entries_for, new_id
from settle_client import Client, Refused

pytestmark = pytest.mark.django_db(transaction=True)

ACTOR = {"name": "refusal-test"}


def client_for(proxy, token, journal) -> Client:
    return Client(proxy.url, token=token, journal=journal, deadline=4.0, attempt_timeout=1.0)


def ask(client: Client, request_id: str, body: str | None = None):
    return client.post_question("Is this final?", body or f"identity {request_id}",
                                actor=ACTOR, request_id=request_id)


def test_other_content_under_a_saved_id_is_refused_as_a_conflict(proxy, token, tmp_path):
    request_id = new_id()
    first = ask(client_for(proxy, token, tmp_path / "one.sqlite3"), request_id)
    proxy.reset()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, tmp_path / "two.sqlite3"), request_id,
            body=f"identity {request_id}, other words")

    assert (no.value.code, no.value.status) == ("conflict", 409)
    assert no.value.details["conflicting_fields"] == ["body"]
    assert no.value.details["existing_id"] == first.entry["id"]
    assert proxy.seen.writes == 1
    assert len(entries_for(request_id)) == 1


def test_a_retry_of_a_deleted_entry_is_refused_as_deleted(proxy, token, tmp_path):
    from board.services import entry_delete

    request_id = new_id()
    first = ask(client_for(proxy, token, tmp_path / "one.sqlite3"), request_id)
    entry_delete(entry_id=first.entry["id"])
    proxy.reset()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, tmp_path / "two.sqlite3"), request_id)

    assert (no.value.code, no.value.status) == ("deleted", 410)
    assert proxy.seen.writes == 1


def test_an_invalid_request_is_refused_with_its_fields(proxy, token, journal):
    request_id = new_id()
    client = client_for(proxy, token, journal)

    with pytest.raises(Refused) as no:
        ask(client, request_id, body="x" * 10_001)

    assert (no.value.code, no.value.status) == ("invalid_request", 422)
    assert no.value.details["fields"][0]["field"] == "body"
    assert proxy.seen.writes == 1
    assert client.pending() == []


def test_an_unknown_token_is_refused_as_unauthorized(proxy, transactional_db, journal):
    request_id = new_id()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, "settle_not-a-real-token", journal), request_id)

    assert (no.value.code, no.value.status) == ("unauthorized", 401)
    assert proxy.seen.writes == 1
    assert entries_for(request_id) == []


@pytest.mark.skipif(
    not hasattr(settings, "SETTLE_API_ALLOWED_ORIGINS"),
    reason="this server does not refuse a browser's Origin yet (SPEC 5, 403 forbidden)",
)
def test_a_browser_origin_is_refused_as_forbidden(proxy, token, journal):
    proxy.reset(["origin"])
    request_id = new_id()

    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, journal), request_id)

    assert (no.value.code, no.value.status) == ("forbidden", 403)
    assert proxy.seen.writes == 1


def test_a_refusal_is_recorded_and_answered_again_without_sending(proxy, token, journal):
    request_id = new_id()
    with pytest.raises(Refused):
        ask(client_for(proxy, token, journal), request_id, body="x" * 10_001)
    proxy.reset()

    with pytest.raises(Refused) as again:
        ask(client_for(proxy, token, journal), request_id, body="x" * 10_001)

    assert again.value.code == "invalid_request"
    assert proxy.seen.writes == 0


def test_a_journaled_id_with_other_content_is_a_value_error_and_nothing_is_sent(
    proxy, token, journal
):
    request_id = new_id()
    ask(client_for(proxy, token, journal), request_id)
    proxy.reset()

    with pytest.raises(ValueError):
        ask(client_for(proxy, token, journal), request_id, body="other words")

    assert proxy.seen.writes == 0
    assert len(entries_for(request_id)) == 1


def test_a_request_id_that_is_not_a_uuid_is_sent_and_refused_by_the_server(
    proxy, token, journal
):
    with pytest.raises(Refused) as no:
        ask(client_for(proxy, token, journal), "not-a-uuid")

    assert (no.value.code, no.value.status) == ("invalid_request", 422)
    assert proxy.seen.writes == 1
