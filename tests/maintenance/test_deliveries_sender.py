"""The sender against a real receiver on 127.0.0.1: each answer ends in SPEC 9's state.

The tests do what the worker does (`sweep.delivery_run`, again whenever the delivery is
due) in this process, with no transaction open, so they see the same rows the worker
would write. The schedule is three attempts with no delay and the timeout one second.
"""

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from board import services as board
from maintenance.deliveries import actions, endpoints, rules, sweep
from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint
from tests.maintenance.conftest import (
    PUBLIC_URL,
    delivery_of,
    drive,
    endpoint_for,
    in_thread,
    post_entry,
)
from tests.maintenance.webhook_receiver import Behaviour

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def attempts_of(delivery: Delivery) -> list[DeliveryAttempt]:
    return list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("started_at"))


def test_it_succeeds_on_2xx_with_a_signed_standard_webhook(receiver):
    # given
    endpoint = endpoint_for(receiver)
    entry = post_entry()

    # when
    delivery = drive(delivery_of(entry))

    # then: one request, verified by the receiver, with the contract's headers and body
    assert delivery.state == "succeeded" and delivery.settled_at is not None
    [seen] = receiver.posts()
    assert seen.verified
    assert seen.headers["webhook-id"] == str(delivery.pk)
    assert seen.headers["idempotency-key"] == str(delivery.pk)
    assert seen.path == "/hooks/settle?token=receiver-secret"
    body = json.loads(seen.body)
    assert body["type"] == "entry.created"
    assert body["timestamp"] == body["data"]["created_at"]
    assert body["data"]["id"] == entry.pk
    assert body["data"]["url"] == f"{PUBLIC_URL}/threads/{entry.pk}"
    [attempt] = attempts_of(delivery)
    assert (attempt.kind, attempt.status_code, attempt.error) == ("send", 200, "")
    assert attempt.request_left is True and attempt.duration_ms is not None
    assert str(attempt.attempt_id) not in seen.headers.values()
    endpoint.refresh_from_db()
    assert endpoint.last_success_at is not None and endpoint.failing_since is None


def test_it_fails_on_400_without_retrying(receiver):
    endpoint_for(receiver)
    receiver.default = Behaviour(status=400)

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "failed"
    assert len(receiver.posts()) == 1
    assert [a.status_code for a in attempts_of(delivery)] == [400]


def test_it_fails_on_410_and_disables_the_endpoint(receiver):
    endpoint = endpoint_for(receiver)
    receiver.default = Behaviour(status=410)

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "failed"
    assert len(receiver.posts()) == 1
    endpoint.refresh_from_db()
    assert endpoint.enabled is False
    assert "410" in endpoint.disabled_reason and endpoint.disabled_at is not None


def test_it_retries_a_5xx_with_the_same_id_and_the_same_bytes(receiver):
    endpoint_for(receiver)
    receiver.script = [Behaviour(status=503), Behaviour(status=500)]

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "succeeded"
    posts = receiver.posts()
    assert len(posts) == 3
    assert {seen.headers["webhook-id"] for seen in posts} == {str(delivery.pk)}
    assert len({seen.body for seen in posts}) == 1
    assert [a.status_code for a in attempts_of(delivery)] == [503, 500, 200]
    assert delivery.attempts == 3


def test_it_fails_when_every_attempt_of_the_schedule_answered_5xx(receiver):
    endpoint_for(receiver)
    receiver.default = Behaviour(status=502)

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "failed"
    assert len(receiver.posts()) == 3  # the schedule's length, no layer underneath adds any


def test_it_honours_retry_after_on_429(receiver):
    endpoint_for(receiver)
    receiver.script = [Behaviour(status=429, headers={"Retry-After": "2"})]

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "succeeded"
    first, second = receiver.posts()
    assert second.at - first.at >= 1.9
    assert [a.status_code for a in attempts_of(delivery)] == [429, 200]


def test_it_never_follows_a_redirect(receiver):
    endpoint_for(receiver)
    receiver.default = Behaviour(
        status=302, headers={"Location": f"http://127.0.0.1:{receiver.port}/elsewhere"}
    )

    delivery = drive(delivery_of(post_entry()))

    # then: a 3xx is retried like a 5xx, and the Location is never requested
    assert delivery.state == "failed"
    assert [seen.path for seen in receiver.seen] == ["/hooks/settle?token=receiver-secret"] * 3


def test_a_timeout_on_a_none_endpoint_is_outcome_unknown_after_one_request(receiver):
    endpoint_for(receiver, supports="none")
    receiver.script = [Behaviour(hang=True)]

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "outcome_unknown" and delivery.unanswered
    assert len(receiver.posts()) == 1
    [attempt] = attempts_of(delivery)
    assert attempt.status_code is None and attempt.error == "timeout"
    assert attempt.request_left is True
    assert 900 <= attempt.duration_ms < 2000  # the one-second budget, not the hang


def test_a_closed_connection_on_a_none_endpoint_is_outcome_unknown(receiver):
    endpoint_for(receiver, supports="none")
    receiver.script = [Behaviour(close=True)]

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "outcome_unknown"
    assert len(receiver.posts()) == 1
    [attempt] = attempts_of(delivery)
    assert attempt.error in {"connection_closed", "connection_reset"}


def test_a_timeout_on_a_dedupe_endpoint_is_sent_again_and_recorded_once(receiver):
    endpoint_for(receiver, supports="dedupe")
    receiver.script = [Behaviour(hang=True)]

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "succeeded"
    assert len(receiver.posts()) == 2
    assert list(receiver.notices) == [str(delivery.pk)]  # the notice, once
    assert receiver.duplicates == 1
    assert [(a.status_code, a.error) for a in attempts_of(delivery)] == [
        (None, "timeout"), (200, "")
    ]


def test_a_timeout_on_a_lookup_endpoint_is_settled_by_the_lookup(receiver):
    endpoint_for(receiver, supports="lookup")
    receiver.script = [Behaviour(hang=True)]

    delivery = drive(delivery_of(post_entry()))

    # then: looked up before anything was sent again; the receiver had it: succeeded
    assert delivery.state == "succeeded"
    assert len(receiver.posts()) == 1
    [lookup] = receiver.lookups()
    assert lookup.verified and lookup.path == f"/lookup/{delivery.pk}"
    assert [(a.kind, a.status_code) for a in attempts_of(delivery)] == [
        ("send", None), ("lookup", 200)
    ]


def test_a_lookup_answering_404_allows_the_next_attempt(receiver):
    endpoint_for(receiver, supports="lookup")
    # The receiver reads the request, drops it unprocessed, and closes the connection.
    receiver.script = [Behaviour(close=True)]

    delivery = delivery_of(post_entry())
    sweep.delivery_run(delivery_id=delivery.pk)
    receiver.notices.clear()  # it lost the notice: the lookup will say 404
    delivery = drive(delivery)

    assert delivery.state == "succeeded"
    assert [(a.kind, a.status_code) for a in attempts_of(delivery)] == [
        ("send", None), ("lookup", 404), ("send", 200)
    ]
    assert len(receiver.notices) == 1


def test_an_unclear_lookup_is_repeated_until_the_deadline_makes_it_unknown(
    receiver, settings
):
    endpoint_for(receiver, supports="lookup")
    receiver.script = [Behaviour(hang=True)]
    receiver.lookup_status = 503
    delivery = delivery_of(post_entry())
    sweep.delivery_run(delivery_id=delivery.pk)  # the send times out
    sweep.delivery_run(delivery_id=delivery.pk)  # the lookup is due at once: 503
    sweep.delivery_run(delivery_id=delivery.pk)  # the next lookup waits for the next run

    delivery.refresh_from_db()
    assert delivery.state == "accepted" and delivery.lookup_due
    assert [seen.method for seen in receiver.seen] == ["POST", "GET"]
    assert delivery.next_attempt_at > delivery.created_at + timedelta(seconds=50)
    # when: an operator's Reconcile does the waiting lookup now; it answers 503 again
    delivery = actions.delivery_reconcile(delivery_id=delivery.pk)
    assert delivery.state == "accepted" and delivery.lookup_due
    # and the deadline passes before a lookup settles it
    Delivery.objects.filter(pk=delivery.pk).update(deadline_at=delivery.created_at)
    sweep.deliveries_sweep()

    delivery.refresh_from_db()
    assert delivery.state == "outcome_unknown"
    assert len(receiver.posts()) == 1


def test_two_secrets_sign_after_a_rotation(receiver):
    endpoint = endpoint_for(receiver)
    old_secret = receiver.secrets[0]
    _, new_secret = endpoints.endpoint_rotate(name=endpoint.name)

    # given: a receiver that knows only the new secret, and another only the old one
    receiver.secrets = [new_secret]
    drive(delivery_of(post_entry()))
    receiver.secrets = [old_secret]
    drive(delivery_of(post_entry()))

    first, second = receiver.posts()
    assert first.verified and second.verified
    assert len(first.headers["webhook-signature"].split(" ")) == 2


def test_a_second_rotation_drops_the_oldest_secret_at_once(receiver):
    endpoint = endpoint_for(receiver)
    oldest = receiver.secrets[0]
    endpoints.endpoint_rotate(name=endpoint.name)
    _, newest = endpoints.endpoint_rotate(name=endpoint.name)
    receiver.secrets = [oldest]

    delivery = drive(delivery_of(post_entry()))

    # then: the oldest secret no longer signs, so this receiver refuses (401: failed)
    assert delivery.state == "failed"
    [seen] = receiver.posts()
    assert not seen.verified
    assert len(seen.headers["webhook-signature"].split(" ")) == 2
    endpoint.refresh_from_db()
    assert endpoint.secret == newest


def test_a_hidden_entry_is_never_sent(receiver):
    endpoint_for(receiver)
    entry = post_entry()
    board.entry_set_visible(entry_id=entry.pk, visible=False)

    delivery = drive(delivery_of(entry))

    assert delivery.state == "cancelled"
    assert receiver.seen == []


def test_a_disabled_endpoints_delivery_waits_and_resumes_when_enabled(receiver):
    endpoint = endpoint_for(receiver)
    entry = post_entry()
    endpoints.endpoint_disable(name=endpoint.name, reason="maintenance window")

    sweep.delivery_run(delivery_id=delivery_of(entry).pk)
    sweep.deliveries_sweep(inline=True)
    assert delivery_of(entry).state == "accepted" and receiver.seen == []

    endpoints.endpoint_enable(name=endpoint.name)
    sweep.deliveries_sweep(inline=True)

    assert delivery_of(entry).state == "succeeded"
    assert len(receiver.posts()) == 1


def test_the_attempt_is_capped_by_the_time_left_before_the_deadline(receiver, settings):
    settings.SETTLE_DELIVERY_TIMEOUT = timedelta(seconds=5)
    endpoint_for(receiver, supports="none")
    receiver.script = [Behaviour(hang=True)]
    delivery = delivery_of(post_entry())
    Delivery.objects.filter(pk=delivery.pk).update(
        deadline_at=timezone.now() + timedelta(seconds=1)
    )

    delivery = drive(delivery)

    [attempt] = attempts_of(delivery)
    assert attempt.error == "timeout" and attempt.duration_ms < 2000
    assert delivery.state == "outcome_unknown"


def test_an_endpoint_row_is_never_given_out_with_a_body(receiver):
    # Evidence keeps no response body: the attempt row has no field that could hold one.
    fields = {field.name for field in DeliveryAttempt._meta.get_fields()}
    assert fields == {
        "attempt_id", "delivery", "kind", "started_at", "duration_ms", "status_code",
        "error", "request_left",
    }
    assert Endpoint._meta.get_field("secret")  # stored, but see the admin test


def test_a_redelivered_or_duplicated_task_makes_no_second_attempt(receiver):
    endpoint_for(receiver)
    receiver.default = Behaviour(status=200, before=lambda: time.sleep(0.3))
    delivery = delivery_of(post_entry())

    # when: two copies of the send task run at once, and a third after it settled
    copies = [in_thread(sweep.delivery_run, delivery_id=delivery.pk) for _ in range(2)]
    for copy in copies:
        copy.join()
    sweep.delivery_run(delivery_id=delivery.pk)

    # then: one claim won; one request; one attempt row
    delivery.refresh_from_db()
    assert delivery.state == "succeeded" and delivery.attempts == 1
    assert len(receiver.posts()) == 1
    assert DeliveryAttempt.objects.filter(delivery=delivery).count() == 1


def test_a_server_dripping_its_answer_is_cut_at_the_timeout(receiver):
    # Every byte comes well within a socket timeout; only the watchdog ends the attempt.
    endpoint_for(receiver, supports="none")
    receiver.script = [Behaviour(drip=True)]

    delivery = drive(delivery_of(post_entry()))

    [attempt] = attempts_of(delivery)
    assert (attempt.status_code, attempt.error) == (None, "timeout")
    assert 900 <= attempt.duration_ms < 1800
    assert delivery.state == "outcome_unknown"


def test_a_retry_after_beyond_the_deadline_ends_the_schedule(receiver, settings):
    settings.SETTLE_DELIVERY_DEADLINE = timedelta(minutes=10)
    endpoint_for(receiver)
    receiver.default = Behaviour(status=503, headers={"Retry-After": "3600"})

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "failed"
    assert len(receiver.posts()) == 1


def test_delays_get_twenty_percent_jitter(settings):
    settings.SETTLE_DELIVERY_SCHEDULE = [timedelta(0), timedelta(seconds=100)]
    now = timezone.now()
    delivery = Delivery(attempts=1, deadline_at=now + timedelta(hours=1))

    delays = {(rules.next_due(delivery, now, None) - now).total_seconds() for _ in range(200)}

    assert min(delays) >= 80 and max(delays) <= 120
    assert min(delays) < 90 and max(delays) > 110  # spread over the band, not fixed
    delivery.attempts = 2
    assert rules.next_due(delivery, now, None) is None  # the schedule's length


@pytest.mark.django_db(transaction=False)
def test_no_request_leaves_while_a_transaction_is_open(receiver):
    # (a `django_db` test runs inside a transaction)
    endpoint_for(receiver)
    delivery = delivery_of(post_entry())

    with pytest.raises(RuntimeError, match="transaction"):
        sweep.delivery_run(delivery_id=delivery.pk)

    assert receiver.seen == []
    assert Delivery.objects.get(pk=delivery.pk).state == "accepted"
