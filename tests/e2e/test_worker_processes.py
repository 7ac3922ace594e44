"""Several gunicorn worker processes share nothing but the database: the claim and the
hourly counters must hold across them (SPEC 1, 11.1)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.db import connection

from board.models import Entry
from receipts.models import Receipt
from tests.conftest import question

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    params = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{params['NAME']}"
    return (
        f"postgres://{params['USER']}@{params['HOST'] or '127.0.0.1'}:{params['PORT'] or 5432}"
        f"/{params['NAME']}"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def gunicorn(request):
    """Three sync workers serving the test database; yields their base URL."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DEBUG": "false",
        "SECRET_KEY": "test-only",
        **getattr(request, "param", {}),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "board.wsgi", "--workers", "3",
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/v1/threads", timeout=5)
            break
        except OSError:  # refused, reset or timed out while the workers boot
            time.sleep(0.2)
    else:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("gunicorn did not start: " + process.stderr.read().decode()[-2000:])
    yield base
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(10)


def post(base: str, payload: dict) -> int:
    request = urllib.request.Request(
        f"{base}/api/v1/entries", data=json.dumps(payload).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    status = None
    for _ in range(3):
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            status = error.code
            if json.loads(error.read())["error"]["code"] not in ("in_progress", "unavailable"):
                return status
    return status


@pytest.mark.parametrize(
    "gunicorn", [{"SETTLE_SOURCE_HOURLY_LIMIT": "1000"}], indirect=True
)
def test_it_saves_one_entry_for_identical_requests_across_worker_processes(gunicorn):
    payload = question()

    with ThreadPoolExecutor(max_workers=24) as pool:
        statuses = list(pool.map(lambda _: post(gunicorn, payload), range(24)))

    assert sorted(statuses) == [200] * 23 + [201]
    assert Entry.objects.count() == 1
    assert Receipt.objects.count() == 1


@pytest.mark.parametrize("gunicorn", [{"SETTLE_SOURCE_HOURLY_LIMIT": "5"}], indirect=True)
def test_it_holds_the_source_limit_across_worker_processes(gunicorn):
    payloads = [question() for _ in range(12)]

    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = list(pool.map(lambda p: post(gunicorn, p), payloads))

    assert sorted(statuses) == [201] * 5 + [429] * 7
    assert Entry.objects.count() == 5
