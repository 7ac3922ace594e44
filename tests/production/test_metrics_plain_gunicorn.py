"""Counts hold across worker processes however the server is started (SPEC 12): here
plain `gunicorn board.wsgi:application -w 3`, without deploy/gunicorn.conf.py and without
PROMETHEUS_MULTIPROC_DIR, as a Dockerfile or a buildpack starts it."""

import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from board.models import Entry
from board.serving.metrics_folder import PARENT, PREFIX
from tests.celery_worker import test_database_url
from tests.conftest import question
from tests.e2e.conftest import free_port
from tests.e2e.processes import stop, wait_until
from tests.production.conftest import ROOT, SECRET, call, wait_until_up
from tests.production.test_metrics import outcome_of, posts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def plain_gunicorn(tmp_path):
    port = free_port()
    env = {
        **os.environ, "DATABASE_URL": test_database_url(), "DEBUG": "false",
        "SECRET_KEY": SECRET, "SETTLE_SOURCE_HOURLY_LIMIT": "1000",
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    stderr = tmp_path / "stderr.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "board.wsgi:application", "-w", "3",
         "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr.open("w"),
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, process, stderr)
        warm_up(base, process)
        yield base, process
    finally:
        stop(process)


def warm_up(base: str, master: subprocess.Popen) -> None:
    """Until each of the three workers has answered a request (each then has its file)."""

    def answered() -> int:
        with ThreadPoolExecutor(max_workers=6) as pool:
            list(pool.map(lambda _: call(base, "/healthz"), range(12)))
        return len(list(PARENT.glob(f"{PREFIX}{master.pid}-*/histogram_*.db"))) >= 3

    assert wait_until(answered, seconds=30, every=0.1), "not every worker answered"


def test_totals_are_exact_whichever_worker_answers_the_scrape(plain_gunicorn):
    base, master = plain_gunicorn
    created = [question() for _ in range(9)]
    replayed = created[:5]
    conflicting = [{**p, "body": "Something else entirely."} for p in created[5:7]]

    def send(payload: dict) -> str:
        status, _, body = call(base, "/api/v1/entries", method="POST", body=payload)
        return outcome_of(status, body)

    tally: Counter = Counter()
    with ThreadPoolExecutor(max_workers=6) as pool:
        for phase in (created, replayed, conflicting):
            tally.update(pool.map(send, phase))
    scrapes = [call(base, "/metrics")[2].decode() for _ in range(6)]

    assert tally == {"created": 9, "replayed": 5, "conflict": 2}
    for text in scrapes:
        assert posts(text) == {"created": 9, "replayed": 5, "conflict": 2}
    assert Entry.objects.count() == 9
    # The server's own folder, named after its master, holds the workers' counts.
    (folder,) = PARENT.glob(f"{PREFIX}{master.pid}-*")
    assert len(list(folder.glob("counter_*.db"))) >= 2


@pytest.fixture
def abandoned():
    """A folder left by a server that was killed (no pid this high is running)."""
    folder = PARENT / f"{PREFIX}999999999-1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "counter_1.db").write_bytes(b"")
    return folder


def test_a_folder_of_a_server_no_longer_running_is_removed(abandoned, plain_gunicorn):
    base, _ = plain_gunicorn

    status, _, _ = call(base, "/metrics")

    assert status == 200
    assert not abandoned.exists()
