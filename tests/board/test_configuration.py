"""Configuration comes from the environment and fails loudly (SPEC 3)."""

import os
import subprocess
import sys
from datetime import timedelta

import pytest

from board.serving.environment import parse_duration

CHECK = [sys.executable, "-c", "import django; django.setup()"]


@pytest.mark.parametrize(
    "raw, seconds",
    [("90", 90), ("90s", 90), ("15m", 900), ("2h", 7200), ("30d", 2_592_000)],
)
def test_it_reads_durations(raw, seconds):
    assert parse_duration(raw) == timedelta(seconds=seconds)


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
