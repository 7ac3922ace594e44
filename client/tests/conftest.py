"""A live Settle (gunicorn on the test database) behind a fault-injecting proxy."""

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from faults import FaultProxy

from tests.e2e.conftest import database_url, free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def settle_server(django_db_setup, django_db_blocker, tmp_path_factory):
    """Three sync gunicorn workers on the test database; yields (base URL, port)."""
    with django_db_blocker.unblock():
        url = database_url()
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DEBUG": "false",
        "SECRET_KEY": "test-only",
        "SETTLE_SOURCE_HOURLY_LIMIT": "100000",
        "SETTLE_OVERALL_HOURLY_LIMIT": "100000",
    }
    log = tmp_path_factory.mktemp("settle") / "gunicorn.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "board.wsgi", "--workers", "3",
         "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"),
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/v1/threads", timeout=5)
            break
        except urllib.error.HTTPError:
            break
        except OSError:
            time.sleep(0.2)
    else:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("gunicorn did not start: " + log.read_text()[-2000:])
    yield port
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(10)


@pytest.fixture
def proxy(settle_server):
    faults = FaultProxy(settle_server)
    yield faults
    faults.close()


@pytest.fixture
def token(transactional_db):
    from board.services import token_issue

    return token_issue(name=f"agent-{uuid.uuid4().hex[:8]}")[1]


@pytest.fixture(params=["http", "mcp"])
def transport(request):
    """Each test taking it runs once over HTTP and once over MCP."""
    return request.param


@pytest.fixture
def journal(tmp_path):
    return tmp_path / "state" / "journal.sqlite3"
