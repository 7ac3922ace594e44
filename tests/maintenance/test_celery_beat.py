"""Beat itself, in a real `celery worker -B` process, purges an expired thread.

The broker is whatever the settings choose: Redis when CELERY_BROKER_URL is set (CI on
PostgreSQL), else the embedded filesystem broker (here in a private folder). The worker
sees the test database because the test commits (transactional) and passes its name.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from board.models import Entry
from maintenance.models import MaintenanceRun
from receipts.models import Tombstone
from tests.celery_worker import celery_worker, wait_for
from tests.conftest import question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]


def test_beat_runs_the_purge_and_records_it(tmp_path):
    # given: a thread whose receipt expired a day ago, by the wall clock
    _, token = board.token_issue(name="beat-test")
    long_ago = timezone.now() - timedelta(days=31)
    board.entry_post(token=token, address="127.0.0.1", fields=entry_fields_read(question()),
                     route="api", now=long_ago)
    assert Entry.objects.count() == 1

    # when: a worker with beat runs against this database, every job every second
    with celery_worker(
        tmp_path, beat=True, env={"SETTLE_TEST_BEAT_SECONDS": "1",
                                  "SETTLE_BROKER_DIR": str(tmp_path / "broker")}
    ) as log:
        run = wait_for(
            lambda: MaintenanceRun.objects.filter(
                job="purge-expired-threads", counts__threads=1
            ).first()
        )

    # then: beat sent it, the worker purged the thread and recorded the run
    assert run is not None, log.read_text()[-3000:]
    assert run.counts == {"threads": 1, "entries": 1, "receipts": 1, "tombstones": 1}
    assert run.error == "" and run.finished_at is not None
    assert Entry.objects.count() == 0
    assert Tombstone.objects.count() == 1
