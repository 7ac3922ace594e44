"""What the console's search and actor indexes (issue 39, SPEC 11.7) cost a post.

Run with `make bench PYTEST_ARGS="-k console_indexes"` or directly:
`.venv/bin/python -m pytest tests/bench/bench_console_indexes.py -o python_files='bench_*.py' -s`
(add DATABASE_URL for PostgreSQL). Posts ROUNDS questions through Django's test client
(the whole request), best of three, three ways in one run: with every index, without
the search index (pg_trgm's two GIN indexes; SQLite's FTS5 triggers), and without the
actor index too (the board before issue 39). On PostgreSQL it also reads the WAL a new
post writes (pg_current_wal_insert_lsn before and after the batch, divided), which
includes full-page images: run it on a private database and compare the rows, not the
absolute numbers, with the other benches.
"""

import os
import time

import pytest
from django.db import connection
from django.test import Client

from tests.conftest import question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "300"))
BODIES = {"short body": None, "10,000-character body": "word " * 2000}

POSTGRES_SEARCH = {
    "drop": [
        "DROP INDEX IF EXISTS entry_title_trigrams", "DROP INDEX IF EXISTS entry_body_trigrams",
    ],
    "make": [
        "CREATE INDEX IF NOT EXISTS entry_title_trigrams"
        " ON board_entry USING gin (title gin_trgm_ops)",
        "CREATE INDEX IF NOT EXISTS entry_body_trigrams"
        " ON board_entry USING gin (body gin_trgm_ops)",
    ],
}
ACTOR = {
    "drop": ["DROP INDEX IF EXISTS entry_actor_newest"],
    "make": ["CREATE INDEX IF NOT EXISTS entry_actor_newest ON board_entry (actor_name, id DESC)"],
}


def sqlite_search() -> dict:
    from importlib import import_module

    made = import_module("board.migrations.0007_entry_search_and_filter_indexes")
    return {"drop": made.SQLITE_SEARCH_DROP, "make": made.SQLITE_SEARCH}


def run(statements: list[str]) -> None:
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def wal_position() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()")
        return cursor.fetchone()[0]


def wal_since(start: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s)", [start])
        return int(cursor.fetchone()[0])


def batch(client: Client, body: str | None) -> tuple[float, int]:
    """Seconds a post and WAL bytes a post (0 on SQLite) for ROUNDS new posts."""
    payloads = [question(**({"body": body} if body else {})) for _ in range(ROUNDS)]
    postgres = connection.vendor == "postgresql"
    start = wal_position() if postgres else None
    started = time.perf_counter()
    for payload in payloads:
        answer = client.post("/api/v1/entries", payload, content_type="application/json")
        assert answer.status_code == 201, answer.content
    elapsed = (time.perf_counter() - started) / ROUNDS
    return elapsed, (wal_since(start) // ROUNDS if postgres else 0)


def test_what_the_console_indexes_cost_a_post(settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = settings.SETTLE_OVERALL_HOURLY_LIMIT = 100 * ROUNDS
    search = POSTGRES_SEARCH if connection.vendor == "postgresql" else sqlite_search()
    client = Client()
    client.post("/api/v1/entries", question(), content_type="application/json")  # warm
    make_search = search["make"] if connection.vendor == "postgresql" else [
        s.replace("CREATE VIRTUAL TABLE ", "CREATE VIRTUAL TABLE IF NOT EXISTS ")
        .replace("CREATE TRIGGER ", "CREATE TRIGGER IF NOT EXISTS ") for s in search["make"]
    ]
    ways = {
        "every index": ACTOR["make"] + make_search,
        "without the search index": ACTOR["make"] + search["drop"],
        "without search and actor indexes": ACTOR["drop"] + search["drop"],
    }
    # Each way is measured twice, in turn and then in the reverse order, so that a table
    # growing through the run (or a neighbour's load) favours none of them.
    order = [*ways, *reversed(ways)]
    lines = []
    try:
        for name in order:
            run(ways[name])
            for label, body in BODIES.items():
                runs = [batch(client, body) for _ in range(3)]
                best = min(seconds for seconds, _ in runs)
                wal = min(wal for _, wal in runs)
                lines.append(
                    f"  {name:34} {label:22} best of 3: {best * 1e3:6.2f} ms/post"
                    + (f", {wal:6d} WAL bytes/post (least of 3)" if wal else "")
                )
    finally:
        run(ways["every index"])
    print(f"\n[{connection.vendor}] {ROUNDS} posts through the test client, three ways:")
    print("\n".join(lines))
