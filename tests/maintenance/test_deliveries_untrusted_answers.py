"""What a receiver sends back is untrusted input (SPEC 9): `Retry-After` of any shape is
read without error, and no answer, however malformed, leaves a delivery `running`."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from maintenance.deliveries import endpoints, sweep
from maintenance.deliveries.models import Delivery
from maintenance.deliveries.webhooks import RETRY_AFTER_CAP, retry_after_seconds
from tests.maintenance.conftest import delivery_of, drive, endpoint_for, post_entry
from tests.maintenance.webhook_receiver import Behaviour, RawReceiver

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        (" 7 ", 7.0),
        ("0", 0.0),
        ("99999999999999999999", RETRY_AFTER_CAP),
        ("9" * 32, RETRY_AFTER_CAP),
        (format_datetime(NOW + timedelta(minutes=5), usegmt=True), 300.0),
        (format_datetime(NOW - timedelta(days=3), usegmt=True), 0.0),
        ("Fri, 31 Dec 9999 23:59:59 GMT", RETRY_AFTER_CAP),
    ],
)
def test_it_reads_a_valid_retry_after_in_seconds(value, seconds):
    assert retry_after_seconds(value, now=NOW) == seconds


@pytest.mark.parametrize(
    "value",
    [
        None, "", "   ", "-5", "+5", "1.5", "1e9", "²", "١٢٣", "５", "12a", "0x10", "soon",
        "9" * 33, "Mon, 99 Foo 2026 99:99:99 GMT", "Fri, 31 Dec 2026 23:59:59",
        "Tue, 01 Dec 2026 12:00:00 +9999", "\x00", "1\r\n2", "é",
    ],
)
def test_it_ignores_a_retry_after_it_cannot_trust(value):
    assert retry_after_seconds(value, now=NOW) is None


@given(st.text())
def test_it_reads_any_text_without_error(value):
    seconds = retry_after_seconds(value, now=NOW)
    assert seconds is None or 0.0 <= seconds <= RETRY_AFTER_CAP


@given(st.integers(min_value=0, max_value=10**31))
def test_it_reads_any_count_of_seconds_and_caps_it(count):
    assert retry_after_seconds(str(count), now=NOW) == min(float(count), RETRY_AFTER_CAP)


@given(st.datetimes(timezones=st.just(UTC)))
def test_it_reads_any_http_date(moment):
    seconds = retry_after_seconds(format_datetime(moment, usegmt=True), now=NOW)
    assert seconds is None or 0.0 <= seconds <= RETRY_AFTER_CAP


# --- Through a real receiver ------------------------------------------------------------




@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_a_huge_retry_after_ends_the_schedule_failed_not_running(receiver):
    # given: a receiver that asks for more time than any deadline holds
    endpoint_for(receiver)
    receiver.default = Behaviour(status=503, headers={"Retry-After": "99999999999999999999"})

    # when
    delivery = drive(delivery_of(post_entry()))

    # then: the attempt was answered, and its Retry-After reaches past the deadline
    assert delivery.state == "failed" and delivery.settled_at is not None
    assert len(receiver.posts()) == 1
    [attempt] = delivery.attempt_log.all()
    assert (attempt.status_code, attempt.error) == (503, "")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_a_non_ascii_retry_after_on_a_2xx_is_ignored(receiver):
    endpoint_for(receiver)
    receiver.default = Behaviour(status=200, headers={"Retry-After": "²"})

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "succeeded"
    [attempt] = delivery.attempt_log.all()
    assert (attempt.status_code, attempt.error) == (200, "")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_a_garbage_retry_after_on_a_503_is_retried_then_failed(receiver):
    endpoint_for(receiver)
    receiver.default = Behaviour(status=503, headers={"Retry-After": "-1"})

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "failed"
    assert len(receiver.posts()) == 3


# --- No answer leaves a delivery running, or stops the run ------------------------------


@pytest.fixture
def raw_receiver():
    made = []

    def make(answer: bytes) -> RawReceiver:
        made.append(RawReceiver(answer))
        return made[-1]

    yield make
    for server in made:
        server.close()


def endpoint_on(url: str, *, name: str, supports: str = "none"):
    endpoint, _ = endpoints.endpoint_add(
        name=name, url=url, supports=supports, allow_private=True,
        private_reason="the test receiver runs on loopback",
    )
    return endpoint


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n",
        b"SMTP ready\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 200 + b"\r\n",
        b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70000 + b"\r\n\r\n",
    ],
    ids=["bad-status-code", "not-http", "too-many-headers", "header-too-long"],
)
def test_a_malformed_answer_is_the_request_left_with_no_usable_answer(raw_receiver, answer):
    # given: a receiver with no dedupe support, answering what HTTP cannot parse
    server = raw_receiver(answer)
    endpoint_on(server.url, name="raw")

    # when
    delivery = drive(delivery_of(post_entry()))

    # then: the request left, the answer is unusable: by the support rule, unknown
    assert delivery.state == "outcome_unknown" and delivery.unanswered
    [attempt] = delivery.attempt_log.all()
    assert attempt.status_code is None and attempt.request_left is True
    assert attempt.error and server.requests == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_a_malformed_answer_to_a_dedupe_endpoint_is_sent_again(raw_receiver):
    server = raw_receiver(b"HTTP/1.1 2OO OK\r\n\r\n")
    endpoint_on(server.url, name="raw", supports="dedupe")

    delivery = drive(delivery_of(post_entry()))

    assert delivery.state == "outcome_unknown"  # the schedule ran out after unanswered sends
    assert server.requests == 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_one_bad_answer_does_not_stop_deliveries_run_for_the_others(receiver, raw_receiver):
    # given: two endpoints, the first to be handled answering with a huge Retry-After
    hostile = raw_receiver(
        b"HTTP/1.1 503 Busy\r\nRetry-After: 99999999999999999999\r\nContent-Length: 0\r\n\r\n"
    )
    endpoint_on(hostile.url, name="hostile")
    endpoint_for(receiver, name="good")
    entry = post_entry()

    # when: the sweep makes every due attempt in this process, as `deliveries run` does
    sweep.deliveries_sweep(now=timezone.now() + timedelta(seconds=1), inline=True)

    # then: neither is left running, and the good receiver got its notice
    states = {d.endpoint.name: d.state for d in Delivery.objects.filter(entry_id=entry.pk)}
    assert states == {"hostile": "failed", "good": "succeeded"}
    assert len(receiver.posts()) == 1
