"""Settle served as in production: gunicorn with deploy/gunicorn.conf.py on the test
database, its standard output and error kept in files for the tests to read."""

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.celery_worker import test_database_url
from tests.e2e.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "deploy" / "gunicorn.conf.py"
# Long enough for Django's check; no test relies on its value (SPEC 12's 50+ is checked
# by the check --deploy test with its own key).
SECRET = "production-test-secret-key-7f3c9a1e5b2d4f6a8c0e2b4d6f8a1c3e5b7d9f"
# The TLS tests' server holds a self-signed certificate made for the test.
UNVERIFIED = ssl._create_unverified_context()


@dataclass
class Served:
    base: str
    stdout: Path
    stderr: Path
    process: subprocess.Popen
    metrics_dir: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(30)

    def lines(self) -> list[dict]:
        """Every line both streams carried, each parsed as JSON (a line that is not
        JSON fails the test that reads it)."""
        found = []
        for path in (self.stdout, self.stderr):
            for line in path.read_text().splitlines():
                if line.strip():
                    found.append(json.loads(line))
        return found

    def text(self) -> str:
        return self.stdout.read_text() + self.stderr.read_text()


def wait_until_up(base: str, process: subprocess.Popen, stderr: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail("gunicorn exited: " + stderr.read_text()[-2000:])
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=5, context=UNVERIFIED)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    pytest.fail("gunicorn did not start: " + stderr.read_text()[-2000:])


def served_launch(parent: Path, *, scheme: str = "http", config: bool = True,
                  **overrides: str) -> Served:
    """Start gunicorn with the production config (`config=False`: gunicorn's own defaults
    instead of deploy/'s file) and these environment overrides, its files in a folder of
    `parent`; the caller waits for it (wait_until_up) and stops it."""
    port = free_port()
    folder = parent / f"server-{port}"
    folder.mkdir()
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "DEBUG": "false",
        "SECRET_KEY": SECRET,
        "SETTLE_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",  # tests about several workers ask for them
        "PROMETHEUS_MULTIPROC_DIR": str(folder / "metrics"),
        **overrides,
    }
    stdout, stderr = folder / "stdout.log", folder / "stderr.log"
    command = [sys.executable, "-m", "gunicorn", "-c", str(CONFIG)]
    if not config:
        command = [sys.executable, "-m", "gunicorn", "board.wsgi", "--bind",
                   env["SETTLE_BIND"], "--workers", env["WEB_CONCURRENCY"]]
    process = subprocess.Popen(
        command,
        cwd=ROOT, env=env, stdout=stdout.open("w"), stderr=stderr.open("w"),
        start_new_session=True,
    )
    return Served(f"{scheme}://127.0.0.1:{port}", stdout, stderr, process,
                  Path(env["PROMETHEUS_MULTIPROC_DIR"]))


@pytest.fixture
def serve(tmp_path):
    """Start gunicorn with the production config; call it with environment overrides."""
    started: list[Served] = []

    def start(*, scheme: str = "http", config: bool = True, **overrides: str) -> Served:
        """`config=False` runs gunicorn with its own defaults instead of deploy/'s file."""
        served = served_launch(tmp_path, scheme=scheme, config=config, **overrides)
        started.append(served)
        wait_until_up(served.base, served.process, served.stderr)
        return served

    yield start
    for served in started:
        served.stop()


def call(base: str, path: str, *, method: str = "GET", body: dict | bytes | None = None,
         headers: dict | None = None, timeout: float = 30) -> tuple[int, dict, bytes]:
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    request = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=UNVERIFIED) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
