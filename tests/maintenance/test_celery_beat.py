"""Beat itself, in a real `celery worker -B` process, purges an expired thread.

The broker is whatever the settings choose: Redis when CELERY_BROKER_URL is set (CI on
PostgreSQL), else the embedded filesystem broker (here in a private folder). The worker
sees the test database because the test commits (transactional) and passes its name.
"""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection
from django.utils import timezone

from board import services as board
from board.models import Entry
from maintenance.models import MaintenanceRun
from receipts.models import Tombstone
from tests.conftest import question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]

CELERY = Path(sys.executable).with_name("celery")
WAIT_SECONDS = 60


def test_database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    credentials = quote(db["USER"] or "")
    if db.get("PASSWORD"):
        credentials += ":" + quote(db["PASSWORD"])
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{credentials}@{db['HOST'] or 'localhost'}{port}/{db['NAME']}"


test_database_url.__test__ = False  # a helper, not a test


def test_beat_runs_the_purge_and_records_it(tmp_path):
    # given: a thread whose receipt expired a day ago, by the wall clock
    _, token = board.token_issue(name="beat-test")
    long_ago = timezone.now() - timedelta(days=31)
    board.entry_post(token=token, address="127.0.0.1", body=question(), route="api",
                     now=long_ago)
    assert Entry.objects.count() == 1

    # when: a worker with beat runs against this database, every job every second
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "SETTLE_TEST_BEAT_SECONDS": "1",
        "SETTLE_BROKER_DIR": str(tmp_path / "broker"),
        "DEBUG": "true",
    }
    log = open(tmp_path / "worker.log", "w")
    worker = subprocess.Popen(
        [str(CELERY), "-A", "board", "worker", "-B", "--loglevel", "INFO",
         "--concurrency", "1", "--schedule", str(tmp_path / "beat-schedule")],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        run = None
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline and run is None:
            time.sleep(0.5)
            run = MaintenanceRun.objects.filter(
                job="purge-expired-threads", counts__threads=1
            ).first()
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        log.close()

    # then: beat sent it, the worker purged the thread and recorded the run
    assert run is not None, (tmp_path / "worker.log").read_text()[-3000:]
    assert run.counts == {"threads": 1, "entries": 1, "receipts": 1, "tombstones": 1}
    assert run.error == "" and run.finished_at is not None
    assert Entry.objects.count() == 0
    assert Tombstone.objects.count() == 1
