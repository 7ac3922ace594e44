"""The deliveries page's success rates come from a per-minute tally a beat job keeps
(maintenance/deliveries/rates.py), never from the attempts themselves (SPEC 11.7)."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models import Count, Q
from django.test.utils import CaptureQueriesContext

from maintenance.activity import minute_of
from maintenance.deliveries import rates, selectors
from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint, EndpointMinute
from tests.moderation.conftest import logged_in

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 2, 12, 30, 15, tzinfo=UTC)
K = DeliveryAttempt.Kind


@pytest.fixture
def clock(time_machine):
    time_machine.move_to(NOW, tick=False)
    return time_machine


def endpoint_named(name: str) -> Endpoint:
    return Endpoint.objects.create(
        name=name, url=f"https://{name}.example.org/hooks", secret="whsec_" + "A" * 43,
        created_at=NOW - timedelta(days=10), updated_at=NOW - timedelta(days=10),
    )


def attempt(endpoint: Endpoint, *, kind: str = K.SEND, ago: timedelta,
            status: int | None = 200) -> DeliveryAttempt:
    started = NOW - ago
    delivery = Delivery.objects.create(
        id=uuid.uuid4(), endpoint=endpoint, entry_id=1, created_at=started,
        deadline_at=started + timedelta(days=1),
    )
    return DeliveryAttempt.objects.create(
        attempt_id=uuid.uuid4(), delivery=delivery, kind=kind, started_at=started,
        status_code=status, request_left=True,
    )


def rates_on_the_page(now: datetime = NOW) -> dict[str, tuple[int, int, float | None]]:
    return {
        row.endpoint.name: (row.recent_attempts, row.recent_successes, row.success_rate)
        for row in selectors.endpoints_overview(now=now)
    }


def counted_from_the_attempts(now: datetime = NOW) -> dict[str, tuple[int, int]]:
    """What the attempts themselves say: the last day's sends and resends, 2xx among them."""
    rows = (
        DeliveryAttempt.objects.filter(kind__in=[K.SEND, K.RESEND],
                                       started_at__gt=now - timedelta(days=1))
        .values("delivery__endpoint__name")
        .annotate(n=Count("pk"), ok=Count("pk", filter=Q(status_code__gte=200,
                                                          status_code__lt=300)))
    )
    return {row["delivery__endpoint__name"]: (row["n"], row["ok"]) for row in rows}


def rollup_rows() -> list[tuple]:
    return list(
        EndpointMinute.objects.order_by("minute", "endpoint_id")
        .values_list("minute", "endpoint_id", "sends", "successes", "rolled_up_at")
    )


def test_the_rates_after_a_roll_up_are_what_the_attempts_say(clock):
    # given: two endpoints' sends and resends of the last day, answered or not, and
    # attempts the rates leave out (lookups, reconciles, sends older than a day)
    crm, billing = endpoint_named("crm"), endpoint_named("billing")
    attempt(crm, ago=timedelta(minutes=2))
    attempt(crm, ago=timedelta(minutes=2), status=500)
    attempt(crm, ago=timedelta(hours=5), status=None)  # no answer: sent, not a success
    attempt(crm, kind=K.RESEND, ago=timedelta(hours=23), status=204)
    attempt(crm, kind=K.LOOKUP, ago=timedelta(minutes=1))
    attempt(crm, kind=K.RECONCILE, ago=timedelta(minutes=1))
    attempt(crm, ago=timedelta(days=1, minutes=5))
    attempt(billing, ago=timedelta(hours=1), status=429)

    # when: beat's job has run
    rates.endpoint_rates_roll_up(now=NOW)

    # then
    assert counted_from_the_attempts() == {"crm": (4, 2), "billing": (1, 0)}
    assert rates_on_the_page() == {"billing": (1, 0, 0.0), "crm": (4, 2, 0.5)}


def test_an_endpoint_with_no_attempts_shows_no_rate(clock):
    endpoint_named("quiet")

    rates.endpoint_rates_roll_up(now=NOW)

    [quiet] = selectors.endpoints_overview(now=NOW)
    assert (quiet.recent_attempts, quiet.recent_successes, quiet.success_rate) == (0, 0, None)
    assert quiet.rolled_up_at == NOW


def test_nothing_is_counted_before_the_jobs_first_run(clock):
    attempt(endpoint_named("crm"), ago=timedelta(minutes=3))

    [crm] = selectors.endpoints_overview(now=NOW)

    assert (crm.recent_attempts, crm.success_rate, crm.rolled_up_at) == (0, None, None)


def test_an_attempt_started_before_the_last_run_and_written_after_it_is_counted_next(clock):
    # given: a run that saw one send still in flight
    crm = endpoint_named("crm")
    in_flight = attempt(crm, ago=timedelta(seconds=5), status=None)
    rates.endpoint_rates_roll_up(now=NOW)
    assert rates_on_the_page()["crm"] == (1, 0, 0.0)

    # and after it: that send's answer, and a send stamped before the run whose
    # transaction committed after it
    DeliveryAttempt.objects.filter(pk=in_flight.pk).update(status_code=200)
    attempt(crm, ago=timedelta(seconds=30))
    assert rates_on_the_page()["crm"] == (1, 0, 0.0)  # until the next run

    # when: the next minute's run
    clock.shift(timedelta(minutes=1))
    rates.endpoint_rates_roll_up(now=NOW + timedelta(minutes=1))

    # then
    assert rates_on_the_page(NOW + timedelta(minutes=1))["crm"] == (2, 2, 1.0)


def test_minutes_older_than_a_day_are_dropped(clock):
    # given: a run that counted a send
    crm = endpoint_named("crm")
    attempt(crm, ago=timedelta(minutes=1))
    rates.endpoint_rates_roll_up(now=NOW)

    # when: the job runs again 25 hours later
    later = NOW + timedelta(hours=25)
    clock.move_to(later, tick=False)
    rates.endpoint_rates_roll_up(now=later)

    # then: no minute older than the window is kept, and the send has left the rate
    assert not EndpointMinute.objects.filter(minute__lt=minute_of(later - timedelta(days=1)))
    assert EndpointMinute.objects.count() == 24 * 60 + 1
    assert rates_on_the_page(later)["crm"] == (0, 0, None)


def test_a_second_run_at_the_same_moment_changes_nothing(clock):
    crm = endpoint_named("crm")
    attempt(crm, ago=timedelta(minutes=7))
    attempt(crm, ago=timedelta(hours=3), status=503)

    first = rates.endpoint_rates_roll_up(now=NOW)
    rows = rollup_rows()
    again = rates.endpoint_rates_roll_up(now=NOW)

    assert first.minutes == 24 * 60 + 1 and first.sends == 2
    assert rollup_rows() == rows
    assert again.since > first.since  # the second recounts only the last few minutes
    assert rates_on_the_page()["crm"] == (2, 1, 0.5)


def test_a_minute_whose_attempts_went_is_set_back_to_zero(clock):
    # given: a counted send, then removed (its delivery purged)
    crm = endpoint_named("crm")
    gone = attempt(crm, ago=timedelta(minutes=2))
    rates.endpoint_rates_roll_up(now=NOW)
    Delivery.objects.filter(pk=gone.delivery_id).delete()

    # when
    clock.shift(timedelta(minutes=1))
    rates.endpoint_rates_roll_up(now=NOW + timedelta(minutes=1))

    # then
    assert rates_on_the_page(NOW + timedelta(minutes=1))["crm"] == (0, 0, None)


def test_the_deliveries_page_shows_the_rates_as_of_the_last_run(clock, operator):
    console = logged_in(operator)
    crm = endpoint_named("crm")
    attempt(crm, ago=timedelta(minutes=2))
    attempt(crm, ago=timedelta(minutes=2), status=500)

    # before the job's first run: no rate, and the page says why
    before = console.get("/console/deliveries/").content.decode()
    assert "no sends" in before and "not yet made" in before

    # after it: the rate, as of that run, read from the tally alone
    rates.endpoint_rates_roll_up(now=NOW)
    with CaptureQueriesContext(connection) as captured:
        page = console.get("/console/deliveries/")
    shown = page.content.decode()
    assert "50 %" in shown and "(1 of 2 sends)" in shown
    assert "not yet made" not in shown
    assert 'last at <time datetime="2026-03-02T12:30:15+00:00"' in shown
    # attempts are read only as the evidence of the deliveries listed, by their ids
    reading_attempts = [q["sql"] for q in captured if DeliveryAttempt._meta.db_table in q["sql"]]
    assert all('"delivery_id" IN' in sql and "COUNT" not in sql for sql in reading_attempts)


def test_beat_runs_the_roll_up_every_minute(clock, settings):
    from board.celery import app
    from maintenance import tasks  # noqa: F401 (what the worker's autodiscovery imports)

    entry = settings.CELERY_BEAT_SCHEDULE["deliveries-roll-up"]
    assert entry["schedule"] == timedelta(minutes=1)
    attempt(endpoint_named("crm"), ago=timedelta(minutes=1))

    outcome = app.tasks[entry["task"]]()

    assert outcome["sends"] == 1 and outcome["since"] == "2026-03-01T12:30:00+00:00"
    assert rates_on_the_page()["crm"] == (1, 1, 1.0)
