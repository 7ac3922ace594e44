"""On PostgreSQL the write path's statements are prepared once per connection, so the
server stops parsing and planning them on every post; SETTLE_DB_PREPARED_STATEMENTS=false
turns that off for a pooler that cannot keep them (docs/write-path.md, "The write path")."""

import os
import subprocess
import sys

import pytest
from django.db import connection

from tests.conftest import question

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_after_a_few_posts_the_write_path_runs_prepared_statements(agent):
    # given: a fresh connection
    connection.close()

    # when: more posts than psycopg's prepare threshold (5), on that one connection
    for _ in range(6):
        assert agent.post(question()).status_code == 201

    # then: the claim, the entry's statement and the admission are prepared on it
    prepared = " ".join(prepared_statements())
    assert "INSERT INTO receipts_receipt" in prepared
    assert "INSERT INTO board_entry" in prepared
    assert "board_post_admit(" in prepared  # the admission: the counters, in its function


def test_the_switch_turns_prepared_statements_off():
    options = subprocess.run(
        [sys.executable, "-c",
         "import django; django.setup(); from django.conf import settings; "
         "print(sorted(settings.DATABASES['default']['OPTIONS']))"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "board.settings",
             "SETTLE_DB_PREPARED_STATEMENTS": "false"},
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout

    assert "server_side_binding" not in options
    assert "prepare_threshold" not in options
    assert "connect_timeout" in options
