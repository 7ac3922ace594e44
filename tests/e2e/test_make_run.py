"""`make run` on a first run, once installed (issue 38, 8.5): the operator's login comes
first, set apart, not under the migrations' lines; then bin/serve goes on as
tests/e2e/test_serve_script.py reads it. (The install itself is left out: it would
reinstall into the venv these tests run in.)"""

import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import free_port
from tests.e2e.processes import ROOT, stop, wait_until


def first_make_run(tmp_path: Path) -> str:
    """What `make run` prints, after installing, on an empty database, until it serves."""
    port = free_port()
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("SETTLE_", "CELERY_"))
           and name not in ("DATABASE_URL", "PORT", "DEBUG", "SECRET_KEY",
                            "MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    env.update(VENV=str(Path(sys.executable).parent.parent),
               DATABASE_URL=f"sqlite:///{tmp_path / 'first-run.sqlite3'}",
               SETTLE_BIND=f"127.0.0.1:{port}", SETTLE_BROKER_DIR=str(tmp_path / "broker"),
               # Its collectstatic writes a manifest: in the checkout's var/static it would
               # turn every later test's static URLs into hashed names.
               SETTLE_STATIC_ROOT=str(tmp_path / "static"),
               # One web and one worker process (bin/serve's own settings): what is read
               # here comes before either serves, and fewer starting up leave the login
               # sooner and stop sooner on a busy machine.
               WEB_CONCURRENCY="1", SETTLE_WORKER_CONCURRENCY="1")
    out = tmp_path / "make-run.log"
    # -o install: the steps after installing, into this venv as it is
    process = subprocess.Popen(["make", "--no-print-directory", "-o", "install", "run"],
                               cwd=ROOT, env=env, stdout=out.open("w"),
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        serving = wait_until(lambda: "Settle is serving" in out.read_text(), seconds=120)
    finally:
        stop(process)
    assert serving, out.read_text()[-3000:]
    return out.read_text()


def test_a_first_make_run_says_the_operators_login_first_and_set_apart(tmp_path):
    lines = first_make_run(tmp_path).splitlines()

    login = next(n for n, line in enumerate(lines) if "with password " in line)

    assert login <= 2, "\n".join(lines[:login + 1])
    assert lines[login - 1] == "" and lines[login + 1] == "", lines[:login + 2]
