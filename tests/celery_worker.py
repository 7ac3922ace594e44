"""A real Celery worker process for tests, on the test database and the test's broker.

The broker is whatever the settings chose: Redis when CELERY_BROKER_URL is set (CI on
PostgreSQL), else the embedded filesystem broker in the folder this process uses. The
worker sees the test database because the test commits (transactional) and passes it.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from board.celery import app

CELERY = Path(sys.executable).with_name("celery")
ROOT = Path(__file__).resolve().parents[1]
# The settings a test's worker runs with: board.settings, the embedded broker polled more
# often (tests/worker_settings.py).
WORKER_SETTINGS = "tests.worker_settings"


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


@contextmanager
def celery_worker(tmp_path: Path, *, beat: bool, env: dict | None = None) -> Iterator[Path]:
    """Run `celery -A board worker` (with `-B` when `beat`); yields its log file's path."""
    environment = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "SETTLE_BROKER_DIR": str(settings.BROKER_DIR),
        "DEBUG": "true",
        "DJANGO_SETTINGS_MODULE": WORKER_SETTINGS,
        **(env or {}),
    }
    log_path = tmp_path / "worker.log"
    # Tasks are acknowledged late (board/celery.py): ones an earlier test queued and never
    # saw run are still on the shared broker. Each test's worker starts on an empty queue.
    if "SETTLE_BROKER_DIR" not in (env or {}) and "CELERY_BROKER_URL" not in (env or {}):
        app.control.purge()
    command = [str(CELERY), "-A", "board", "worker", "--loglevel", "INFO", "--concurrency", "1"]
    if beat:
        command += ["-B", "--schedule", str(tmp_path / "beat-schedule")]
    with open(log_path, "w") as log:
        worker = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield log_path
            assert worker.poll() is None, log_path.read_text()[-3000:]
        finally:
            # Celery's warm shutdown: the main process lets running tasks finish. A TERM
            # to the whole group would kill a pool process mid-task, and the broker would
            # hand that task to the next test's worker.
            worker.terminate()
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(worker.pid, signal.SIGKILL)  # whatever is left of the group
            except ProcessLookupError:
                pass
            worker.wait()


def wait_for(found: Callable[[], object], *, seconds: float = 60) -> object:
    """Poll until `found()` returns something truthy, or give up and return None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = found()
        if result:
            return result
        time.sleep(0.1)
    return None
