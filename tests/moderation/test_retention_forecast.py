"""The retention page shows what a purge now would remove from the last dry run a beat
job recorded (`forecast-purges`), with its age: it never runs a dry run while it renders
(SPEC 8.3), which took 87 s with a backlog of 500,000 rows."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from maintenance.forecast import forecast_latest, forecast_record
from maintenance.models import PurgeForecast
from moderation import actions as moderation
from receipts.models import Receipt
from tests.conftest import question
from tests.moderation.test_scaling import grow_board, queries_for

pytestmark = pytest.mark.django_db

LATER = timedelta(days=31)


def expire_every_receipt() -> None:
    Receipt.objects.update(receipt_expires_at=timezone.now() - timedelta(days=1))


def test_it_says_not_yet_measured_before_the_forecast_job_ran(console, agent):
    agent.post(question())

    page = console.get("/console/retention/").content.decode()

    assert "Not yet measured." in page
    assert 'id="forecast-purge-expired-threads"' not in page


def test_it_shows_the_last_forecasts_counts_and_its_age(console, agent):
    # given: a thread due for the purge, and a forecast recorded twenty minutes ago
    agent.post(question())
    expire_every_receipt()
    forecast_record(now=timezone.now() - timedelta(minutes=20))

    # when
    page = console.get("/console/retention/").content.decode()

    # then
    assert "Not yet measured." not in page
    assert '<span class="forecast-age">20 min ago</span>' in page
    row = page.split('id="forecast-purge-expired-threads"')[1].split("</tr>")[0]
    assert '<td class="num">1</td><td class="num">0</td>' in row


def test_it_never_runs_a_dry_run_while_it_renders(console, agent, settings):
    # given: a backlog the dry run would walk in batches of ten, and a recorded forecast
    settings.SETTLE_PURGE_BATCH_SIZE = 10
    grow_board(10)
    expire_every_receipt()
    forecast_record(now=timezone.now())
    queries_for(console, "/console/retention/")  # warm caches once

    # when
    with CaptureQueriesContext(connection) as captured:
        assert console.get("/console/retention/").status_code == 200
    small = len(captured)
    grow_board(1_000)
    expire_every_receipt()
    large = queries_for(console, "/console/retention/")

    # then: nothing deleted (a dry run deletes, then rolls back), as many statements for
    # a backlog of 1,000 as of 10
    statements = [query["sql"].lstrip().upper() for query in captured]
    assert not [sql for sql in statements if sql.startswith("DELETE")]
    assert not [sql for sql in statements if "BOARD_HOLD" in sql and sql.startswith("UPDATE")]
    assert large == small


def test_the_forecast_job_records_what_purge_dry_run_json_prints(agent):
    # given: two threads past expiry, one held
    agent.post(question())
    held = agent.post(question()).json()["id"]
    moderation.hold_add(actor="test", reason="abuse investigation", thread_id=held)
    at = timezone.now() + LATER

    # when
    recorded = forecast_record(now=at)
    out = StringIO()
    call_command("purge", "--dry-run", "--json", "--at", at.isoformat(), stdout=out)

    # then
    printed = json.loads(out.getvalue())
    assert {job: {"removed": n["removed"], "held": n["held"]} for job, n in recorded.jobs.items()} \
        == printed
    assert printed["purge-expired-threads"] == {"removed": 1, "held": 1}
    assert forecast_latest() == recorded and recorded.tombstones["count"] == 0


def test_the_forecast_job_keeps_only_its_newest_record(agent):
    forecast_record(now=timezone.now() - timedelta(minutes=15))
    newest = forecast_record(now=timezone.now())

    assert list(PurgeForecast.objects.all()) == [newest]


def test_its_expiry_chart_is_the_one_recorded_with_the_forecast(console, agent):
    # given: one receipt when the forecast was recorded, two more posted since
    agent.post(question())
    before = console.get("/console/retention/").content.decode()
    forecast_record(now=timezone.now())
    agent.post(question())
    agent.post(question())

    # when
    page = console.get("/console/retention/").content.decode()

    # then: the chart counts what the forecast counted; rendering counted nothing
    assert "Not yet measured: the forecast job records it." in before
    assert "1 receipt expires in the 30 days after" in page
