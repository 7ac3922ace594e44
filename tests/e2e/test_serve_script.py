"""bin/serve (what `make run` starts) says where it serves, once it does (issue 19),
says the operator's login again once the worker is ready, last (issue 32, slip 2), and
stops, its worker too, when its whole group is sent SIGTERM."""

import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password

from tests.celery_worker import test_database_url
from tests.e2e.conftest import free_port
from tests.e2e.processes import stop, wait_until

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


def serve(tmp_path: Path, **env: str) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "serve.log"
    process = subprocess.Popen(
        [str(ROOT / "bin" / "serve")], cwd=ROOT,
        env={**os.environ, "VENV": str(Path(sys.executable).parent.parent),
             "DATABASE_URL": test_database_url(), "DEBUG": "true", "SECRET_KEY": "dev",
             "SETTLE_PUBLIC_URL": "", **env},
        stdout=out.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    return process, out


@dataclass
class Run:
    """What one bin/serve said and did, from start to stop."""

    port: int
    serving: bool  # it said where it serves
    healthz: int | None  # the status /healthz answered then
    gunicorn_environ: list[bytes]  # its gunicorn's environment, read while it ran
    console: bool  # it said the operator's login again
    stopped: bool  # a SIGTERM to its whole group stopped it, its worker included
    out: str  # everything it printed
    operator_password: str | None  # the operator's stored hash once it stopped


@pytest.fixture(scope="module")
def run(tmp_path_factory, django_db_setup, django_db_blocker) -> Run:
    """One bin/serve for the tests below that each read part of one run (starting and
    stopping it, with its Celery worker, takes most of their time): watched until it says
    where it serves and then the operator's login again, then stopped. The operator it
    made is read before any test's end empties the database."""
    tmp_path = tmp_path_factory.mktemp("serve")
    port = free_port()
    process, out = serve(tmp_path, SETTLE_BIND=f"127.0.0.1:{port}")
    healthz, environ, console, worker = None, [], None, None
    try:
        serving = wait_until(lambda: "Settle is serving" in out.read_text(), seconds=60)
        if serving:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz",
                                        timeout=10) as answer:
                healthz = answer.status
            gunicorn = wait_until(lambda: _child(process.pid, b"gunicorn"), seconds=10)
            if gunicorn:
                environ = Path(f"/proc/{gunicorn}/environ").read_bytes().split(b"\0")
            console = wait_until(lambda: "Console: " in out.read_text(), seconds=90)
            worker = _child(process.pid, b"celery")
    finally:
        # As a service manager (or `kill -- -PGID`) stops it: SIGTERM to every process of
        # its group at once. Ctrl-C's SIGINT takes the same way out, through its trap.
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
            stopped = worker is not None and wait_until(
                lambda: not Path(f"/proc/{worker}").exists(), seconds=5
            )
        except subprocess.TimeoutExpired:
            stopped = False
        stop(process, signal.SIGKILL)
        if worker is not None and Path(f"/proc/{worker}").exists():
            os.kill(worker, signal.SIGKILL)  # its own session: the group's SIGKILL misses it
    with django_db_blocker.unblock():
        password = (get_user_model().objects.filter(username="operator")
                    .values_list("password", flat=True).first())
    return Run(port, bool(serving), healthz, environ, bool(console), bool(stopped),
               out.read_text(), password)


def test_it_prints_the_address_it_was_given_once_it_answers_there(run):
    assert run.serving, run.out[-2000:]
    assert f"Settle is serving on http://127.0.0.1:{run.port}/ (Ctrl-C stops it)" in run.out
    assert run.healthz == 200


def test_it_sets_the_public_url_to_where_it_serves_when_none_is_set(run):
    assert run.serving, run.out[-2000:]
    assert run.gunicorn_environ, run.out[-2000:]
    assert f"SETTLE_PUBLIC_URL=http://127.0.0.1:{run.port}".encode() in run.gunicorn_environ


def test_it_says_a_new_operators_password_again_once_the_worker_is_ready(run):
    assert run.console, run.out[-3000:]
    lines = run.out.splitlines()
    created = [n for n, line in enumerate(lines) if "Operator created." in line]
    ready = next(n for n, line in enumerate(lines) if '"celery@' in line and ' ready."' in line)
    assert len(created) == 2 and created[0] < ready < created[1]
    assert lines[created[1]].startswith(f"Console: http://127.0.0.1:{run.port}/console/login/ ")
    password = re.search(r"with password (\S+) ", lines[created[0]])[1]
    assert f"with password {password} " in lines[created[1]]
    assert run.operator_password and check_password(password, run.operator_password)


def test_a_sigterm_to_its_whole_group_stops_it_and_its_worker(run):
    assert run.console, run.out[-3000:]
    assert run.stopped, run.out[-3000:]


def test_it_says_the_port_is_taken_instead_of_where_it_serves(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process, out = serve(tmp_path, SETTLE_BIND=f"127.0.0.1:{port}")
        try:
            code = process.wait(timeout=60)
        finally:
            stop(process)

    assert code != 0
    assert "Settle is serving" not in out.read_text()
    assert f"something already answers on 127.0.0.1:{port}" in out.read_text()


def _child(parent: int, named: bytes) -> int | None:
    for child in Path(f"/proc/{parent}/task/{parent}/children").read_text().split():
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if named in cmdline:
            return int(child)
    return None
