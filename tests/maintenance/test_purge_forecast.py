"""The forecast (SPEC 8.3): `purge --dry-run [--at] [--json]` counts what a purge removes,
exactly, and changes nothing."""

import json
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from board.services import entry_delete
from maintenance import forecast
from maintenance.models import MaintenanceRun
from moderation import actions as moderation
from tests.conftest import counts, question, reply

pytestmark = pytest.mark.usefixtures("roomy_limits")

JOBS = {
    "purge-expired-threads",
    "purge-deletion-records",
    "purge-tombstones",
    "purge-attempts",
    "purge-audit-events",
    "purge-deliveries",
}


def _purge_json(*args: str) -> dict:
    out, err = StringIO(), StringIO()
    call_command("purge", "--json", *args, stdout=out, stderr=err)
    return json.loads(out.getvalue())


def _some_threads(agent, n: int = 3) -> list[int]:
    ids = []
    for _ in range(n):
        question_id = agent.post(question()).json()["id"]
        ids.append(question_id)
        ids.append(agent.post(reply(question_id)).json()["id"])
    return ids


def test_the_dry_run_counts_are_what_the_real_purge_then_records(agent, settings):
    # given: threads whose receipts expire within a second, one reply deleted
    settings.SETTLE_ENTRY_RETENTION = timedelta(seconds=1)
    settings.SETTLE_DELETION_RETENTION = timedelta(seconds=1)
    ids = _some_threads(agent)
    entry_delete(entry_id=ids[1])
    time.sleep(1.2)
    before = counts()

    # when: a dry run, then a real purge
    dry = _purge_json("--dry-run")
    assert counts() == before and MaintenanceRun.objects.count() == 0
    real = _purge_json()

    # then: the same numbers, and the recorded runs say so too
    assert set(dry) == JOBS
    assert all(set(numbers) == {"removed", "held"} for numbers in dry.values())
    assert dry == real
    assert dry["purge-expired-threads"]["removed"] + dry["purge-deletion-records"]["removed"] >= 5
    for job, numbers in dry.items():
        run = MaintenanceRun.objects.get(job=job)
        assert forecast.removed_count(job=job, counts=run.counts) == numbers["removed"]
        assert numbers["held"] == 0  # no hold is placed here
    assert counts()["entries"] == 0


def test_at_counts_what_a_purge_at_that_future_time_would_remove(agent):
    # given: six entries with the default 30-day retention
    _some_threads(agent)
    before = counts()
    soon = (timezone.now() + timedelta(days=1)).isoformat()
    later = (timezone.now() + timedelta(days=31)).isoformat().replace("+00:00", "Z")

    # when
    tomorrow = _purge_json("--dry-run", "--at", soon)
    next_month = _purge_json("--dry-run", "--at", later)

    # then: nothing due tomorrow, all six next month, and nothing changed
    assert tomorrow["purge-expired-threads"] == {"removed": 0, "held": 0}
    assert next_month["purge-expired-threads"] == {"removed": 6, "held": 0}
    assert counts() == before
    assert forecast.purge_forecast(now=timezone.now() + timedelta(days=31))[
        "purge-expired-threads"
    ]["counts"] == {"threads": 3, "entries": 6, "receipts": 6, "tombstones": 6}


def test_the_plain_dry_run_prints_each_job_with_its_held_count(agent):
    agent.post(question())
    out = StringIO()
    call_command("purge", "--dry-run", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == len(JOBS)
    expected = "would remove 0 threads, 0 entries, 0 receipts, 0 tombstones, held 0"
    assert f"purge-expired-threads: {expected}" in lines


@pytest.mark.parametrize("args", [["--at", "2030-01-01T00:00:00Z"], ["--dry-run", "--at", "soon"],
                                  ["--dry-run", "--at", "2030-01-01T00:00:00"],
                                  ["--dry-run", "--at", "9999-12-31T23:59:59-23:00"],
                                  ["--dry-run", "--at", "0001-01-01T00:00:00Z"]])
def test_a_bad_at_is_refused_and_changes_nothing(agent, args):
    from django.core.management import CommandError

    with pytest.raises(CommandError):
        call_command("purge", *args, stdout=StringIO())
    assert MaintenanceRun.objects.count() == 0


def test_receipts_expiring_per_day_over_the_next_30_days(agent):
    _some_threads(agent, n=2)
    # receipts written now with the 30-day retention expire on the last bar
    days = forecast.receipts_expiring_by_day(now=timezone.now())
    assert len(days) == 31
    assert sum(n for _, n in days) == 4 and days[-1][1] == 4
    assert sum(n for _, n in forecast.receipts_expiring_by_day(now=timezone.now(), days=29)) == 0


def test_a_deleted_receipt_expires_on_the_chart_by_the_deletion_policy_in_force(agent):
    # given: one entry deleted now (the delete reckoned 30 days), then the policy cut to 3
    entry_id = agent.post(question()).json()["id"]
    now = timezone.now()
    entry_delete(entry_id=entry_id, now=now)
    moderation.retention_set(actor="test", policy="deletion", seconds=3 * 86400)

    # when
    days = forecast.receipts_expiring_by_day(now=now)

    # then: it is counted on the day the purges will take it, three days on
    assert sum(n for _, n in days) == 1
    assert days[3][1] == 1
