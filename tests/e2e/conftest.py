"""A real multi-process server for end-to-end tests: gunicorn on the test database."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

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


@contextmanager
def gunicorn_serving(log: Path, database: str, **overrides: str) -> Iterator[int]:
    """Three sync workers of `gunicorn board.wsgi` serving `database` (a DATABASE_URL),
    with these environment variables changed; yields their port once they answer, and
    stops them at the end. The live server of the e2e tests and of the client's tests."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "DEBUG": "false",
        "SECRET_KEY": "test-only",
        **overrides,
    }
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
            break  # it answered, if only with an error: the server is up
        except OSError:  # refused, reset or timed out while the workers boot
            time.sleep(0.2)
    else:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("gunicorn did not start: " + log.read_text()[-2000:])
    try:
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)


@pytest.fixture(scope="module")
def gunicorn(request, tmp_path_factory, django_db_setup, django_db_blocker):
    """Three sync workers serving the test database; yields their base URL.

    Parametrize it indirectly with a dict of environment variables to change. One server
    serves a module's tests that change the same variables (starting one is most of such a
    test's time); each test's own data is still its own (the database is emptied after
    each transactional test); a module split over two xdist workers starts one on each.
    """
    overrides = getattr(request, "param", {})
    with django_db_blocker.unblock():
        url = database_url()
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    with gunicorn_serving(log, url, **overrides) as port:
        yield f"http://127.0.0.1:{port}"
