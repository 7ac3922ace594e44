"""Configuration comes from the environment and fails loudly (SPEC 3)."""

import os
import subprocess
import sys
from datetime import timedelta

import pytest

from board.serving.environment import env_database_url, parse_duration

CHECK = [sys.executable, "-c", "import django; django.setup()"]


@pytest.mark.parametrize(
    "raw, seconds",
    [("90", 90), ("90s", 90), ("15m", 900), ("2h", 7200), ("30d", 2_592_000)],
)
def test_it_reads_durations(raw, seconds):
    assert parse_duration(raw) == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "raw", ["\u0661\u0662h", "\uff13\uff10d", "\u00b2", "1" * 5000, "12 h", "1.5h", "30d\n1"]
)
def test_it_reads_no_other_duration(raw):
    assert parse_duration(raw) is None


def start_with(**env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "board.settings", **env}
    return subprocess.run(CHECK, env=environment, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "name, value",
    [
        ("SETTLE_ENTRY_RETENTION", "thirty days"),
        ("SETTLE_TOMBSTONE_RETENTION", "-5d"),
        ("SETTLE_ENTRY_RETENTION", "99999999999d"),
        ("SETTLE_SOURCE_HOURLY_LIMIT", "lots"),
        ("SETTLE_ALLOW_ANONYMOUS", "maybe"),
        ("SETTLE_TRUSTED_PROXIES", "not-an-address"),
    ],
)
def test_it_refuses_to_start_with_a_bad_value_naming_the_variable(name, value):
    result = start_with(**{name: value})

    assert result.returncode != 0
    assert name in result.stderr


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off():
    result = start_with(DEBUG="false", SECRET_KEY="")

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


@pytest.mark.parametrize(
    "name, value",
    [
        ("SETTLE_ENTRY_RETENTION", "\u0661\u0662h"),
        ("SETTLE_CONSOLE_SESSION_IDLE", "\u0668h"),
        ("SETTLE_DELIVERY_SCHEDULE", "0,\u0665s,5m"),
        ("SETTLE_ATTEMPT_RETENTION", "7" * 100_000),
    ],
)
def test_a_bad_duration_stops_start_up_in_one_line_naming_the_variable(name, value):
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "board.settings", name: value}

    result = subprocess.run(
        [sys.executable, "manage.py", "check"], env=environment, capture_output=True,
        text=True, timeout=60,
    )

    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"settle: {name} must be"), lines[:3]


@pytest.mark.parametrize(
    "url, host, port, options",
    [
        ("postgres://settle@db1:5432,db2:5433/settle?target_session_attrs=read-write"
         "&connect_timeout=3", "db1,db2", "5432,5433",
         {"target_session_attrs": "read-write", "connect_timeout": 3}),
        ("postgresql://settle:secret@db1,db2/settle", "db1,db2", "", {}),
        ("postgres://settle@[::1]:5432,db2/settle", "::1,db2", "5432,", {}),
    ],
)
def test_it_reads_libpqs_multi_host_database_url(url, host, port, options):
    config = env_database_url(url, "DATABASE_URL")

    assert (config["HOST"], config["PORT"], config["NAME"]) == (host, port, "settle")
    assert config.get("OPTIONS", {}) == options


def test_a_multi_host_url_with_a_bad_port_stops_start_up_naming_the_variable():
    result = start_with(DATABASE_URL="postgres://settle@db1:x,db2/settle")

    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr and "x,db2" not in result.stderr


@pytest.mark.parametrize(
    "env, problem",
    [
        ({"DATABASE_URL": "sqlite:///var/replicas.sqlite3",
          "SETTLE_CACHE_URL": "redis://127.0.0.1:6379/0"}, "needs PostgreSQL"),
        ({"DATABASE_URL": "postgres://settle@127.0.0.1:5432/settle"}, "needs SETTLE_CACHE_URL"),
    ],
)
def test_replicas_are_refused_in_one_line_without_postgresql_or_a_shared_cache(env, problem):
    result = start_with(SETTLE_REPLICA_URLS="postgres://settle@replica:5432/settle", **env)

    assert result.returncode != 0
    assert problem in result.stderr and "SETTLE_REPLICA_URLS" in result.stderr
