"""The console's retention page (SPEC 7, 8): policies, runs, tombstones, and a button
that queues every purge for a real worker."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from board.models import Entry
from maintenance import purges as maintenance
from maintenance.models import MaintenanceRun
from moderation.models import AuditEvent
from receipts.models import Tombstone
from tests.celery_worker import celery_worker, wait_for
from tests.conftest import question
from tests.moderation.conftest import logged_in

PAGE = "/console/retention/"
RUN = "/console/retention/run"


def post_expired_thread() -> None:
    long_ago = timezone.now() - timedelta(days=31)
    board.entry_post(
        token=None, address="127.0.0.1", fields=entry_fields_read(question()), route="api",
        now=long_ago,
    )


@pytest.mark.django_db
def test_it_shows_each_policy_its_last_run_and_the_tombstones(console):
    # given: one purge has run and left a tombstone
    post_expired_thread()
    maintenance.job_run(job="purge-expired-threads", purge=maintenance.purge_expired_threads)

    # when
    page = console.get(PAGE).content.decode()

    # then
    for job in maintenance.purge_jobs():
        assert job in page
    assert "(from <code>SETTLE_ENTRY_RETENTION</code>)" in page
    for removed in ("1 thread", "1 entry", "1 receipt", "1 tombstone"):
        assert removed in page
    assert re.search(r"<strong>1</strong> tombstone\s+taking \S+", page)
    assert "Run purge now" in page


@pytest.mark.django_db
def test_moderators_cannot_run_a_purge(moderator):
    response = logged_in(moderator).post(RUN)

    assert response.status_code == 403
    assert AuditEvent.objects.count() == 0
    assert "Run purge now" not in logged_in(moderator).get(PAGE).content.decode()


@pytest.mark.django_db(transaction=True)
def test_run_purge_now_queues_every_purge_for_a_real_worker(administrator, tmp_path):
    # given: an expired thread and a worker (no beat) listening on the broker
    post_expired_thread()
    console = logged_in(administrator)

    with celery_worker(tmp_path, beat=False) as log:
        # when
        response = console.post(RUN, {"reason": "clearing a backlog"}, follow=True)
        run = wait_for(
            lambda: MaintenanceRun.objects.filter(
                job="purge-expired-threads", counts__threads=1
            ).first()
        )

    # then
    assert "Queued 6 purge jobs" in response.content.decode()  # deliveries included
    assert run is not None, log.read_text()[-3000:]
    assert Entry.objects.count() == 0
    assert Tombstone.objects.count() == 1
    event = AuditEvent.objects.get()
    assert (event.action, event.actor, event.reason) == (
        "purge_run_now", "admin", "clearing a backlog"
    )
    assert sorted(event.details["jobs"]) == sorted(maintenance.purge_jobs())
