"""Answers that are not final, from a proxy in front of Settle: the client tries again with
the same id and body, and settles with exactly one entry."""

import pytest
from live import client_for, entries_for, new_id
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
