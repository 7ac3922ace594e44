"""A configuration error is one line naming the variable, with no traceback, at every
entry point an operator starts: manage.py (and bin/settle), gunicorn and Celery."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

ENTRY_POINTS = {
    "manage.py": [sys.executable, "manage.py", "check"],
    "bin/settle": ["bin/settle", "check"],
    "celery worker": [str(BIN / "celery"), "-A", "board", "worker"],
    "celery beat": [str(BIN / "celery"), "-A", "board", "beat"],
}
BAD = {
    "SECRET_KEY": ({"DEBUG": "false", "SECRET_KEY": ""}, "SECRET_KEY must be set"),
    "duration": ({"SETTLE_ENTRY_RETENTION": "thirty days"}, "SETTLE_ENTRY_RETENTION must be"),
    "database": ({"DATABASE_URL": "postgress://settle@db/settle"},
                 "DATABASE_URL is not a database URL Settle can use: the scheme 'postgress'"),
    "database engine": ({"DATABASE_URL": "mysql2://x"},
                        "DATABASE_URL is not a database URL Settle can use: Settle runs on "
                        "PostgreSQL and SQLite, not 'mysql2'"),
    "database garbage": ({"DATABASE_URL": "garbage"},
                         "DATABASE_URL is not a database URL Settle can use: it has no scheme"),
    "public url scheme": ({"SETTLE_PUBLIC_URL": "ftp://x"},
                          "SETTLE_PUBLIC_URL must be an http:// or https:// URL"),
    "public url": ({"SETTLE_PUBLIC_URL": "notaurl"},
                   "SETTLE_PUBLIC_URL must be an http:// or https:// URL"),
    "broker": ({"CELERY_BROKER_URL": "bogus://x"},
               "CELERY_BROKER_URL is not a broker URL Celery can use: the scheme 'bogus'"),
    "CA file, not PEM": ({"SETTLE_DELIVERY_CA_FILE": str(ROOT / "pyproject.toml")},
                         "SETTLE_DELIVERY_CA_FILE holds no certificate authority in PEM form"),
    "CA file, missing": ({"SETTLE_DELIVERY_CA_FILE": str(ROOT / "no-such.pem")},
                         "SETTLE_DELIVERY_CA_FILE names no readable file"),
}


def start(command: list[str], overrides: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBUG": "true", **overrides}
    # bin/settle finds the venv this interpreter belongs to.
    env["VENV"] = os.path.relpath(BIN.parent, ROOT)
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("bad", BAD)
def test_it_says_a_configuration_error_in_one_line(entry, bad):
    overrides, message = BAD[bad]

    result = start(ENTRY_POINTS[entry], overrides)

    assert result.returncode != 0
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(f"settle: {message}")
    assert "Traceback" not in result.stdout + result.stderr


def test_it_stops_gunicorn_with_the_line_and_no_traceback():
    result = start(
        [str(BIN / "gunicorn"), "--bind", "127.0.0.1:0", "board.wsgi"],
        {"DEBUG": "false", "SECRET_KEY": ""},
    )

    assert result.returncode != 0
    assert "settle: SECRET_KEY must be set when DEBUG is off\n" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_worker_refuses_a_purge_budget_past_the_task_time_limit():
    result = start([str(BIN / "celery"), "-A", "board", "worker"],
                   {"SETTLE_PURGE_TIME_BUDGET": "10m"})

    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "settle: SETTLE_PURGE_TIME_BUDGET must be at most 240s (a task's soft time limit "
        "is 300s), not 600s"
    )
    assert "Traceback" not in result.stderr
