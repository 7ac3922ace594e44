"""Answers that are not final, from a proxy in front of Settle: the client tries again with
the same id and body, and settles with exactly one entry."""

import json
import threading

import pytest
from django.db import connection
from live import client_for, entries_for, new_id, question_request
from settle_client import Settled

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("action, how", [
    ("gateway:408", "created"),   # the front proxy gave up reading the request
    ("gateway:425", "created"),   # too early (TLS early data), nothing forwarded
    ("gateway:502", "created"),   # the upstream could not be reached
    ("late:504", "replayed"),     # forwarded and saved; the gateway stopped waiting
    ("late:202", "replayed"),     # a 2xx that is not a 201 or a replay settles nothing
    ("late:200", "replayed"),     # 200 with a body that is not a replay
])
def test_an_answer_that_is_not_final_is_tried_again_and_settles_once(
    proxy, token, journal, transport, action, how
):
    proxy.reset([action])
    request_id = new_id()

    settled = client_for(proxy, token, journal, transport).post_question(
        "Final?", f"identity {request_id}", actor={"name": "gateway"}, request_id=request_id)

    assert isinstance(settled, Settled)
    assert settled.how == how
    assert proxy.seen.writes == 2
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id


def test_retry_after_is_honoured_before_the_next_attempt(proxy, token, journal, transport):
    proxy.reset(["gateway:503"])  # 503 with Retry-After: 1
    request_id = new_id()

    settled = client_for(proxy, token, journal, transport).post_question(
        "Wait?", f"identity {request_id}", actor={"name": "gateway"}, request_id=request_id)

    assert settled.how == "created"
    first, second = proxy.seen.write_times
    assert second - first >= 1.0


# On SQLite, which serializes writers, a held claim is 503 unavailable.
@pytest.mark.postgres
def test_in_progress_while_another_attempt_holds_the_claim_is_tried_again(
    proxy, token, journal, transport
):
    """An earlier attempt of the same request (in this process, through the API) holds its
    claim inside its transaction past the server's 5 s wait; the client's attempt gets 409
    in_progress, waits its Retry-After and settles by the replay once that one commits."""
    from django.test import Client as DjangoClient

    from tests.conftest import new_posts_held

    request_id = new_id()
    request = question_request(request_id, "Busy?", f"identity {request_id}", {"name": "x"})

    def earlier_attempt() -> None:
        try:
            DjangoClient().post("/api/v1/entries", data=json.dumps(request),
                                content_type="application/json",
                                HTTP_AUTHORIZATION=f"Bearer {token}")
        finally:
            connection.close()

    earlier = threading.Thread(target=earlier_attempt)
    with new_posts_held(thread=earlier) as held:  # inside the write's transaction
        earlier.start()
        assert held()
        released = threading.Event()
        proxy.on_forwarded = released.set  # the client's first attempt has its answer
        settled_in = {}
        settling = threading.Thread(target=lambda: settled_in.update(settled=client_for(
            proxy, token, journal, transport, deadline=20.0, attempt_timeout=10.0
        ).post_question("Busy?", f"identity {request_id}", actor={"name": "x"},
                        request_id=request_id)))
        settling.start()
        assert released.wait(15)
    earlier.join()
    settling.join(30)
    settled = settled_in["settled"]

    assert b"in_progress" in proxy.seen.answers[0]
    assert settled.how == "replayed"
    assert proxy.seen.writes == 2
    [entry] = entries_for(request_id)
    assert settled.entry["id"] == entry.id


def test_an_id_in_capitals_settles_as_the_server_echoes_it(proxy, token, journal, transport):
    request_id = new_id().upper()

    settled = client_for(proxy, token, journal, transport).post_question(
        "Capitals?", f"identity {request_id}", actor={"name": "caps"}, request_id=request_id,
    )

    assert (settled.how, settled.request_id) == ("created", request_id)
    assert settled.entry["request_id"] == request_id.lower()
    assert len(entries_for(request_id)) == 1
