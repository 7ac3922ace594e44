"""bin/serve (what `make run` starts) says where it serves, once it does (issue 19), and
says the operator's login again once the worker is ready, last (issue 32, slip 2)."""

import os
import re
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

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


def test_it_prints_the_address_it_was_given_once_it_answers_there(tmp_path):
    port = free_port()
    process, out = serve(tmp_path, SETTLE_BIND=f"127.0.0.1:{port}")
    try:
        said = wait_until(lambda: "Settle is serving" in out.read_text(), seconds=60)

        assert said, out.read_text()[-2000:]
        assert f"Settle is serving on http://127.0.0.1:{port}/ (Ctrl-C stops it)" in (
            out.read_text())
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
            assert answer.status == 200
    finally:
        stop(process)


def test_it_sets_the_public_url_to_where_it_serves_when_none_is_set(tmp_path):
    port = free_port()
    process, out = serve(tmp_path, SETTLE_BIND=f"127.0.0.1:{port}")
    try:
        assert wait_until(lambda: "Settle is serving" in out.read_text(), seconds=60)
        gunicorn = wait_until(lambda: _gunicorn_child(process.pid), seconds=10)

        environ = Path(f"/proc/{gunicorn}/environ").read_bytes().split(b"\0")
        assert f"SETTLE_PUBLIC_URL=http://127.0.0.1:{port}".encode() in environ
    finally:
        stop(process)


def test_it_says_a_new_operators_password_again_once_the_worker_is_ready(tmp_path):
    port = free_port()
    process, out = serve(tmp_path, SETTLE_BIND=f"127.0.0.1:{port}")
    try:
        said = wait_until(lambda: "Console: " in out.read_text(), seconds=90)
    finally:
        stop(process)

    assert said, out.read_text()[-3000:]
    lines = out.read_text().splitlines()
    created = [n for n, line in enumerate(lines) if "Operator created." in line]
    ready = next(n for n, line in enumerate(lines) if '"celery@' in line and ' ready."' in line)
    assert len(created) == 2 and created[0] < ready < created[1]
    assert lines[created[1]].startswith(f"Console: http://127.0.0.1:{port}/console/login/ ")
    password = re.search(r"with password (\S+) ", lines[created[0]])[1]
    assert f"with password {password} " in lines[created[1]]
    assert get_user_model().objects.get(username="operator").check_password(password)


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


def _gunicorn_child(parent: int) -> int | None:
    for child in Path(f"/proc/{parent}/task/{parent}/children").read_text().split():
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"gunicorn" in cmdline:
            return int(child)
    return None
