"""How the suite is split: by engine (the `postgres` marker), by speed (the `process` and
`browser` markers) and over pytest-xdist workers.

Loaded with `-p tests.suite` (pyproject.toml's addopts) for every run, tests/ or
client/tests, and before pytest-django sets Django up, so the environment it sets for a
worker is what the settings read.

Each xdist worker keeps to itself what tests would otherwise share. pytest-django already
gives each worker a test database of its own (the name suffixed `_gw0`, `_gw1`, ...); the
broker is this module's: tests start Celery workers that purge the queue they are given,
so two xdist workers on one broker would empty each other's queues.

- A Redis broker `redis://host:port/N` becomes `/N+1+i` on worker `gwi` (CI's
  CELERY_BROKER_URL=redis://.../7 uses 8, 9, ... with two workers).
- The embedded filesystem broker's folder gets the worker's name as a suffix.

Without xdist (`-p no:xdist`, or `-n 0`) nothing changes.

On PostgreSQL, what a transactional test leaves is deleted rather than truncated
(`pytest_configure` below): the same empty tables, without a second of each teardown.
"""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def worker_broker_url(url: str, index: int) -> str:
    """Each Redis URL in `url` (';'-separated, as Celery reads it) moved to its own
    database for worker `index`; other brokers unchanged."""

    def moved(piece: str) -> str:
        match = re.fullmatch(r"(rediss?://[^/?#]*)(?:/(\d*))?([?#].*)?", piece.strip())
        if not match:
            return piece
        base, number, rest = match.groups()
        return f"{base}/{int(number or 0) + 1 + index}{rest or ''}"

    return ";".join(moved(piece) for piece in url.split(";"))


def _separate_this_worker() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw"):
        return
    index = int(worker[2:])
    broker = os.environ.get("CELERY_BROKER_URL", "").strip()
    if broker:
        os.environ["CELERY_BROKER_URL"] = worker_broker_url(broker, index)
    folder = os.environ.get("SETTLE_BROKER_DIR") or str(ROOT / "var" / "broker")
    os.environ["SETTLE_BROKER_DIR"] = f"{folder}-{worker}"


_separate_this_worker()


# What a test module uses to start processes of its own (tests/e2e/processes.py,
# tests/celery_worker.py, the live gunicorn of tests/e2e/conftest.py), and the fixtures
# that start one (the production-like gunicorn, the one that refuses malformed requests,
# the client's live server).
PROCESS_NAMES = frozenset({"subprocess", "celery_worker", "started", "gunicorn_serving"})
PROCESS_FIXTURES = frozenset({"gunicorn", "serve", "gunicorn_refusals", "settle_server"})


def starts_processes(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    if module is not None and PROCESS_NAMES & vars(module).keys():
        return True
    return bool(PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())))


POSTGRES_ONLY = (
    "needs PostgreSQL: it proves a claim about concurrent processes or a database fault that "
    "SQLite cannot show; run DATABASE_URL=postgres://postgres@127.0.0.1:5432/settle "
    "CELERY_BROKER_URL=redis://127.0.0.1:6379/0 make test (or bash .ci/run)"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from django.db import connection

    on_sqlite = connection.vendor != "postgresql"
    # `-m "not process and not browser"` is the quick round.
    for item in items:
        if on_sqlite and "postgres" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=POSTGRES_ONLY))
        if starts_processes(item):
            item.add_marker(pytest.mark.process)
        # Chromium (tests/chromium.py), whether or not the module says `browser` itself.
        if "playwright_chromium" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        """After each transactional test, PostgreSQL's tables are emptied by DELETE in
        one transaction (the foreign keys deferred to its commit), as by TRUNCATE but
        without TRUNCATE's new files for every table and index: on a busy server those
        cost 0.5 to 1.5 s of each such test's teardown, DELETE a few ms. Sequences are
        reset by TRUNCATE as before, whenever a test asks.

        Principals are never deleted: a trigger refuses it (board/sql/
        board_principal_kept.sql). Emptying every table is no real path, so the flush
        lifts that refusal for its own transaction (TRUNCATE needs nothing: its trigger
        allows emptying the principals together with the entries)."""
        if reset_sequences or allow_cascade or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences,
                            allow_cascade=allow_cascade)
        deletes = [f"DELETE FROM {self.quote_name(table)}" for table in tables]
        if "board_principal" in tables:
            # The foreign keys' checks run before ALTER TABLE, which refuses pending ones.
            deletes = [
                "ALTER TABLE board_principal DISABLE TRIGGER USER", *deletes,
                "SET CONSTRAINTS ALL IMMEDIATE",
                "ALTER TABLE board_principal ENABLE TRIGGER USER",
            ]
        return ["SET CONSTRAINTS ALL DEFERRED", *deletes]

    DatabaseOperations.sql_flush = sql_flush


_postgres_skips = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Counted from the reports, which reach the xdist controller, where the summary is.
    global _postgres_skips
    if report.skipped and isinstance(report.longrepr, tuple):
        if POSTGRES_ONLY in str(report.longrepr[2]):
            _postgres_skips += 1


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    # Said once at the end, where a newcomer reads `N skipped`, without needing -rs.
    if _postgres_skips:
        terminalreporter.write_line(f"{_postgres_skips} skipped: {POSTGRES_ONLY}")
