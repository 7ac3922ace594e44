"""Starting Settle's production processes for tests, as deploy/Procfile names them.

The commands come from deploy/Procfile itself (and so use deploy/gunicorn.conf.py), so a
test of "three web instances and a worker and a beat" runs what an operator runs.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROCFILE = ROOT / "deploy" / "Procfile"
BIN = Path(sys.executable).parent


def procfile() -> dict[str, str]:
    """The Procfile's commands by process name, ready for `bash -c` in ROOT."""
    commands = {}
    for line in PROCFILE.read_text().splitlines():
        match = re.match(r"^([a-z]+):\s*(.+)$", line)
        if match:
            commands[match[1]] = match[2]
    return commands


def environment(**overrides: str) -> dict[str, str]:
    """A production-like environment: the venv first on PATH, DEBUG off."""
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "DEBUG": "false",
        "SECRET_KEY": "process-test-" + "x" * 50,
        "SETTLE_SOURCE_HOURLY_LIMIT": "100000",
        "SETTLE_OVERALL_HOURLY_LIMIT": "100000",
    }
    env.update(overrides)
    return env


@dataclass
class Running:
    name: str
    process: subprocess.Popen
    log: Path

    def tail(self, chars: int = 3000) -> str:
        return f"--- {self.name} ---\n" + self.log.read_text(errors="replace")[-chars:]


@contextmanager
def started(name: str, command: str, env: dict[str, str], tmp_path: Path) -> Iterator[Running]:
    """Run `command` (a Procfile line) in its own process group; stop it at the end."""
    log = tmp_path / f"{name}.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"], cwd=ROOT, env=env, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    running = Running(name, process, log)
    try:
        yield running
    finally:
        stop(process)


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, sig)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_until(found, *, seconds: float, every: float = 0.2):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = found()
        if result:
            return result
        time.sleep(every)
    return None


def answers(base: str) -> bool:
    try:
        urllib.request.urlopen(f"{base}/api/v1/threads", timeout=5)
    except urllib.error.HTTPError:
        return True  # an answer, if an error: the server is up
    except OSError:
        return False
    return True


def wait_for_log(running: Running, text: str, *, seconds: float = 60) -> None:
    if not wait_until(lambda: text in running.log.read_text(errors="replace"), seconds=seconds):
        raise AssertionError(f"{running.name} never logged {text!r}\n{running.tail()}")


@dataclass
class Answer:
    status: int | None  # None: no answer at all (refused, reset, timed out)
    body: dict
    seconds: float

    @property
    def code(self) -> str | None:
        return self.body.get("error", {}).get("code")

    @property
    def outcome(self) -> str | None:
        return self.body.get("error", {}).get("outcome")


def post(base: str, payload: dict, *, timeout: float = 40) -> Answer:
    request = urllib.request.Request(
        f"{base}/api/v1/entries", data=json.dumps(payload).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    began = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Answer(response.status, json.loads(response.read()), time.monotonic() - began)
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"raw": raw[:200].decode(errors="replace")}
        return Answer(error.code, body, time.monotonic() - began)
    except OSError as error:
        return Answer(None, {"transport": type(error).__name__}, time.monotonic() - began)


def new_question(marker: str = "") -> dict:
    """A question whose body carries its request_id, so entries can be counted per identity."""
    request_id = str(uuid.uuid4())
    return {
        "request_id": request_id,
        "type": "question",
        "title": "Did my post survive?",
        "body": f"identity {request_id} {marker}".strip(),
        "actor": {"name": "process-test", "model": "none", "trigger": "test"},
        "submission_mode": "autonomous",
    }


@dataclass
class Identity:
    """One intended post and every answer it got, in order."""

    payload: dict
    answers: list[Answer] = field(default_factory=list)

    @property
    def request_id(self) -> str:
        return self.payload["request_id"]

    @property
    def settled(self) -> Answer | None:
        done = [a for a in self.answers if a.status in (200, 201)]
        return done[-1] if done else None


@contextmanager
def rabbitmq_vhost() -> Iterator[str]:
    """A private RabbitMQ virtual host for one test; yields its broker URL."""
    name = f"settle-test-{uuid.uuid4().hex[:12]}"
    subprocess.run(["rabbitmqctl", "-q", "add_vhost", name], check=True, capture_output=True)
    subprocess.run(
        ["rabbitmqctl", "-q", "set_permissions", "-p", name, "guest", ".*", ".*", ".*"],
        check=True, capture_output=True,
    )
    try:
        yield f"amqp://guest:guest@127.0.0.1:5672/{name}"
    finally:
        subprocess.run(["rabbitmqctl", "-q", "delete_vhost", name], capture_output=True)


def post_expired_thread() -> None:
    """A thread whose receipt expired a day ago, posted through the API back then."""
    from datetime import timedelta

    import time_machine
    from django.test import Client
    from django.utils import timezone

    from tests.conftest import question

    with time_machine.travel(timezone.now() - timedelta(days=31), tick=False):
        response = Client().post(
            "/api/v1/entries", data=json.dumps(question()), content_type="application/json"
        )
    assert response.status_code == 201, response.content
