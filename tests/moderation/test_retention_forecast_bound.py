"""The recorded forecast counts each job up to a bound (SPEC 8.3, 11.7): a backlog past it
is "more than" the bound, what a hold keeps back is exact, "at least" a number or not
counted, and `purge --dry-run --json` still counts everything. The bound is lowered here
(`maintenance.forecast.FORECAST_BOUND`) so that thirty threads are a backlog past it."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from board.models import Entry
from maintenance import forecast, selectors
from maintenance.forecast import forecast_record
from moderation import actions as moderation
from receipts.models import Receipt, Tombstone
from tests.moderation.test_scaling import grow_board

pytestmark = pytest.mark.django_db

THREADS = "purge-expired-threads"


@pytest.fixture
def backlog(settings) -> list[int]:
    """Thirty single-entry threads, all due, walked in batches of five."""
    settings.SETTLE_PURGE_BATCH_SIZE = 5
    grow_board(30)
    Receipt.objects.update(receipt_expires_at=timezone.now() - timedelta(days=1))
    return list(Entry.objects.order_by("id").values_list("id", flat=True))


def hold(threads: list[int]) -> None:
    for thread in threads:
        moderation.hold_add(actor="test", reason="abuse investigation", thread_id=thread)


def dry_run_json() -> dict:
    out = StringIO()
    call_command("purge", "--dry-run", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def forecast_row(page: str, job: str = THREADS) -> str:
    return page.split(f'id="forecast-{job}"')[1].split("</tr>")[0]


def test_a_backlog_past_the_bound_is_counted_only_up_to_it(backlog, monkeypatch):
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)

    recorded = forecast_record(now=timezone.now()).jobs[THREADS]

    # the dry run stopped after the batch that reached ten, well short of thirty
    assert recorded["bounded"] is True and recorded["bound"] == 10
    assert 10 <= recorded["removed"] < 30


def test_with_no_hold_active_nothing_is_held_even_past_the_bound(backlog, monkeypatch):
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)

    recorded = forecast_record(now=timezone.now()).jobs[THREADS]

    assert recorded["bounded"] is True
    assert recorded["held"] == 0 and recorded["held_at_least"] is False


def test_the_job_costs_as_many_statements_for_a_backlog_twice_as_large(
    backlog, monkeypatch
):
    # given: a backlog of 30 past a bound of 10, walked in batches of 5
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)
    with CaptureQueriesContext(connection) as small:
        forecast_record(now=timezone.now())

    # when: the backlog doubles
    grow_board(60)
    Receipt.objects.update(receipt_expires_at=timezone.now() - timedelta(days=1))
    with CaptureQueriesContext(connection) as large:
        forecast_record(now=timezone.now())

    # then: the same batches, the same statements
    assert len(large) == len(small)


def test_purge_dry_run_json_counts_everything_past_the_bound(backlog, monkeypatch):
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)
    hold(backlog[:3])

    printed = dry_run_json()

    assert printed[THREADS] == {"removed": 27, "held": 3}


def test_a_backlog_below_the_bound_is_counted_exactly(backlog, monkeypatch):
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 100)
    hold(backlog[:3])

    recorded = forecast_record(now=timezone.now()).jobs[THREADS]

    assert recorded["bounded"] is False
    assert recorded["removed"] == 27
    assert recorded["held"] == 3 and recorded["held_at_least"] is False
    assert {job: {"removed": n["removed"], "held": n["held"]}
            for job, n in forecast_record(now=timezone.now()).jobs.items()} == dry_run_json()


def test_held_is_at_least_the_difference_when_only_the_count_without_holds_stopped(
    backlog, monkeypatch
):
    # given: 25 of 30 threads held, so what a purge would remove (5) is under the bound
    # and what it would remove without the holds (30) is past it
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)
    hold(backlog[:25])

    recorded = forecast_record(now=timezone.now()).jobs[THREADS]

    assert recorded["bounded"] is False and recorded["removed"] == 5
    assert recorded["held_at_least"] is True
    # counted without the holds up to the bound (10 or a batch more), less the 5
    assert 5 <= recorded["held"] < 25


def test_held_is_not_counted_when_the_count_as_is_stopped(backlog, monkeypatch):
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)
    hold(backlog[:3])

    recorded = forecast_record(now=timezone.now()).jobs[THREADS]

    assert recorded["bounded"] is True
    assert recorded["held"] is None and recorded["held_at_least"] is False


def test_the_page_says_more_than_the_bound_and_not_counted(console, backlog, monkeypatch):
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)
    hold(backlog[:3])
    forecast_record(now=timezone.now() - timedelta(minutes=5))

    page = console.get("/console/retention/").content.decode()

    row = forecast_row(page)
    assert '<td class="num">more than 10</td><td class="num">not counted</td>' in row
    assert "<td>at least " in row
    assert '<span class="forecast-age">5 min ago</span>' in page
    # a job with nothing due is still exact
    assert '<td class="num">0</td><td class="num">0</td>' in forecast_row(page, "purge-tombstones")


def test_the_page_says_at_least_for_what_holds_keep_past_the_bound(console, backlog, monkeypatch):
    monkeypatch.setattr(forecast, "FORECAST_BOUND", 10)
    hold(backlog[:25])
    forecast_record(now=timezone.now())

    row = forecast_row(console.get("/console/retention/").content.decode())

    assert '<td class="num">5</td><td class="num">at least ' in row


def test_the_page_explains_the_bound_in_the_contracts_words(console, agent):
    forecast_record(now=timezone.now())

    page = console.get("/console/retention/").content.decode()

    assert 'past that it says "more than 1,000"' in page


def test_the_forecast_records_the_tombstones_estimate_not_a_count(console, monkeypatch):
    # given: more tombstones than the page counts (lowered to 5), and the table analysed
    monkeypatch.setattr(selectors, "TOMBSTONE_COUNT_BOUND", 5)
    today = timezone.now().date()
    Tombstone.objects.bulk_create(
        Tombstone(key=f"{n:032x}", reason=Tombstone.Reason.EXPIRED, expires_at=today)
        for n in range(12)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Tombstone._meta.db_table}")

    # when
    recorded = forecast_record(now=timezone.now()).tombstones
    page = console.get("/console/retention/").content.decode()

    # then: the engine's estimate, said as such
    assert recorded["about"] is True and recorded["count"] == 12
    assert recorded["source"] in {"pg_class", "sqlite_stat1"}
    assert "About <strong>12</strong> tombstones" in page


def test_without_an_estimate_the_tombstones_are_more_than_the_bound(console, monkeypatch):
    # given: more tombstones than the page counts, on a table never analysed (SQLite)
    monkeypatch.setattr(selectors, "TOMBSTONE_COUNT_BOUND", 5)
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL always has the planner's estimate to give")
    today = timezone.now().date()
    Tombstone.objects.bulk_create(
        Tombstone(key=f"{n:032x}", reason=Tombstone.Reason.EXPIRED, expires_at=today)
        for n in range(12)
    )

    recorded = forecast_record(now=timezone.now()).tombstones
    page = console.get("/console/retention/").content.decode()

    assert recorded["exceeded"] is True and recorded["about"] is False
    assert "More than <strong>5</strong> tombstones" in page
