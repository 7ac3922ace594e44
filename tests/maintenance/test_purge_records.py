"""Deletion records, attempts and counters, audit events; the command, the run records
and the console's overview."""

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from board.models import Entry, HourlyCounter
from board.services import entry_delete
from maintenance import purges
from maintenance.models import MaintenanceRun
from maintenance.selectors import retention_overview
from moderation.actions import audit_purge
from moderation.models import AuditEvent
from receipts.models import Attempt, Tombstone
from tests.conftest import counts, question, reply

pytestmark = pytest.mark.usefixtures("roomy_limits")

MONTH = timedelta(days=31)


def test_it_turns_a_deletion_record_into_a_deleted_tombstone(agent):
    # given: a reply an operator deleted
    question_id = agent.post(question()).json()["id"]
    answered = reply(question_id)
    reply_id = agent.post(answered).json()["id"]
    start = timezone.now()
    entry_delete(entry_id=reply_id, now=start)
    assert agent.post(answered).json()["error"]["code"] == "deleted"

    # when: its deletion retention has passed
    result = purges.purge_deletion_records(now=start + MONTH, batch_size=100)

    # then: receipt and textless row gone, a `deleted` tombstone left; the question stays
    assert result.counts == {"receipts": 1, "entries": 1, "tombstones": 1, "texts": 0}
    assert list(Entry.objects.values_list("id", flat=True)) == [question_id]
    assert Tombstone.objects.get().reason == Tombstone.Reason.DELETED
    retry = agent.post(answered)
    assert retry.status_code == 410 and retry.json()["error"]["code"] == "deleted"
    operation = agent.get(f"/api/v1/operations/{answered['request_id']}").json()
    assert operation["status"] == "deleted"
    assert counts()["entries"] == 1 and counts()["receipts"] == 1


def test_it_keeps_a_deleted_question_row_while_replies_hang_on_it(agent, settings):
    # given: a question deleted with a short deletion retention, its reply still alive
    settings.SETTLE_DELETION_RETENTION = timedelta(days=1)
    question_id = agent.post(question()).json()["id"]
    agent.post(reply(question_id))
    start = timezone.now()
    entry_delete(entry_id=question_id, now=start)

    # when
    result = purges.purge_deletion_records(now=start + timedelta(days=2), batch_size=100)

    # then: the deletion record is a tombstone, the textless row waits for its thread
    assert result.counts == {"receipts": 1, "entries": 0, "tombstones": 1, "texts": 0}
    assert Entry.objects.filter(pk=question_id).exists()
    thread = purges.purge_expired_threads(now=start + MONTH, batch_size=100)
    assert thread.counts == {"threads": 1, "entries": 2, "receipts": 1, "tombstones": 1}
    assert counts()["entries"] == 0 and counts()["tombstones"] == 2


def test_it_removes_a_deleted_question_without_replies(agent):
    question_id = agent.post(question()).json()["id"]
    start = timezone.now()
    entry_delete(entry_id=question_id, now=start)

    result = purges.purge_deletion_records(now=start + MONTH, batch_size=100)

    assert result.counts == {"receipts": 1, "entries": 1, "tombstones": 1, "texts": 0}
    assert counts()["entries"] == 0


def test_it_purges_old_attempts_and_hourly_counters(agent):
    payload = question()
    agent.post(payload)
    agent.post(payload)  # the replay's attempt is logged (the post's is its receipt)
    assert Attempt.objects.count() == 1 and HourlyCounter.objects.count() >= 1

    kept = purges.purge_attempts(now=timezone.now() + timedelta(hours=1), batch_size=100)
    gone = purges.purge_attempts(now=timezone.now() + timedelta(days=8), batch_size=100)

    assert kept.counts == {"attempts": 0, "counters": 0}
    assert gone.counts["attempts"] == 1 and gone.counts["counters"] >= 1
    assert Attempt.objects.count() == 0 and HourlyCounter.objects.count() == 0


def test_it_purges_audit_events_past_a_year(agent):
    # the agent's token was issued through moderation, which audited it
    assert AuditEvent.objects.count() == 1

    kept = audit_purge(now=timezone.now() + timedelta(days=364), batch_size=100)
    gone = audit_purge(now=timezone.now() + timedelta(days=366), batch_size=100)

    assert (kept.counts, gone.counts) == ({"audit_events": 0}, {"audit_events": 1})
    assert AuditEvent.objects.count() == 0


def test_the_purge_command_runs_every_purge_and_records_each_run(agent):
    agent.post(question())
    out = StringIO()

    call_command("purge", "--dry-run", stdout=out)
    assert "purge-expired-threads: would remove 0 threads" in out.getvalue()
    assert MaintenanceRun.objects.count() == 0

    call_command("purge", stdout=out)
    assert set(MaintenanceRun.objects.values_list("job", flat=True)) == {
        "purge-expired-threads",
        "purge-deletion-records",
        "purge-attempts",
        "purge-tombstones",
        "purge-audit-events",
        "purge-deliveries",
    }
    run = MaintenanceRun.objects.get(job="purge-expired-threads")
    assert run.counts == {"threads": 0, "entries": 0, "receipts": 0, "tombstones": 0}
    assert run.finished_at >= run.started_at and run.duration_seconds >= 0
    assert run.error == ""


@pytest.mark.django_db
def test_a_failed_run_is_recorded_with_its_error_class_only():
    from django.db import OperationalError

    def failing(**kwargs):
        raise OperationalError("secret text from the database")

    outcome = purges.job_run(job="purge-tombstones", purge=failing)

    run = MaintenanceRun.objects.get()
    assert run.error.startswith("OperationalError") and "secret" not in run.error
    assert outcome["error"] == run.error and not run.complete


@pytest.mark.django_db
def test_the_overview_shows_policies_runs_schedule_and_tombstones():
    now = timezone.now()
    Tombstone.objects.create(key="00000000-0000-4000-8000-000000000001", reason=1,
                             expires_at=now + timedelta(days=1))
    purges.job_run(job="purge-expired-threads", purge=purges.purge_expired_threads)

    overview = retention_overview(now)

    jobs = {job.job: job for job in overview.jobs}
    assert set(jobs) == {
        "purge-expired-threads", "purge-deletion-records", "purge-attempts",
        "purge-tombstones", "purge-audit-events", "purge-deliveries",
    }
    assert jobs["purge-deliveries"].setting == "SETTLE_DELIVERY_RETENTION"
    threads = jobs["purge-expired-threads"]
    assert threads.setting == "SETTLE_ENTRY_RETENTION" and threads.retention == timedelta(days=30)
    assert threads.last_run.counts["threads"] == 0
    assert threads.next_run_at > now
    assert jobs["purge-deletion-records"].last_run is None
    assert overview.tombstones["count"] == 1 and not overview.tombstones["about"]
    assert overview.tombstones["bytes"] > 0
    assert overview.tombstones["source"] in {"pg_total_relation_size", "dbstat", "estimate"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "now, expected",
    [
        (datetime(2026, 11, 30, 3, 0, 29, tzinfo=UTC), datetime(2026, 11, 30, 3, 15, tzinfo=UTC)),
        (datetime(2026, 11, 30, 4, 0, 29, tzinfo=UTC), datetime(2026, 12, 1, 3, 15, tzinfo=UTC)),
    ],
)
def test_the_overview_tells_when_a_daily_purge_runs_next(now, expected):
    jobs = {job.job: job for job in retention_overview(now).jobs}

    assert jobs["purge-tombstones"].next_run_at == expected
    assert jobs["purge-tombstones"].schedule == "daily at 03:15 UTC"
    assert jobs["purge-deletion-records"].next_run_at is None  # never ran: after beat starts
    assert jobs["purge-expired-threads"].schedule == "every 10 minutes"
