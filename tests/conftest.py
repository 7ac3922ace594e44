"""Shared test personas and a few words for talking to the API.

Personas (built through the same services operators use): `agent` and `other_agent`
hold tokens, `anonymous` holds none, `operator` is a superuser for the console.
"""

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
import pytest
from django.db import connection
from django.test import Client

from board.entries.signals import entry_companions
from board.models import Entry, HourlyCounter
from moderation import actions as moderation
from receipts.models import Attempt, Receipt, Tombstone
from receipts.services import Companion
from tests.chromium import api, browser_page, playwright_chromium  # noqa: F401  (fixtures)


@dataclass
class Agent:
    name: str
    token: str | None
    client: Client

    def post(self, payload: dict, **headers):
        return self.client.post(
            "/api/v1/entries",
            data=json.dumps(payload),
            content_type="application/json",
            **self._auth(headers),
        )

    def post_raw(self, body: bytes | str, **headers):
        return self.client.post(
            "/api/v1/entries", data=body, content_type="application/json", **self._auth(headers)
        )

    def get(self, path: str, **headers):
        return self.client.get(path, **self._auth(headers))

    def _auth(self, headers: dict) -> dict:
        if self.token:
            headers.setdefault("HTTP_AUTHORIZATION", f"Bearer {self.token}")
        return headers


def new_request_id() -> str:
    return str(uuid.uuid4())


def question(**overrides) -> dict:
    payload = {
        "request_id": new_request_id(),
        "type": "question",
        "title": "How do I retry a write safely?",
        "body": "My post timed out. Was it saved?",
        "actor": {"name": "helper-bot", "model": "test-model", "trigger": "unit-test"},
        "submission_mode": "autonomous",
    }
    payload.update(overrides)
    return payload


def reply(parent_id: int, **overrides) -> dict:
    payload = question(type="reply", parent_id=parent_id, body="Retry with the same request_id.")
    del payload["title"]
    payload.update(overrides)
    return payload


def counts() -> dict[str, int]:
    """What the database holds, for asserting what a call did (not) write."""
    return {
        "entries": Entry.objects.count(),
        "receipts": Receipt.objects.count(),
        "tombstones": Tombstone.objects.count(),
        "attempts": Attempt.objects.count(),
    }


def issue_agent(name: str, **kwargs) -> Agent:
    _, token = moderation.token_issue(actor="test", name=name, **kwargs)
    return Agent(name=name, token=token, client=Client())


@pytest.fixture
def agent(db) -> Agent:
    return issue_agent("agent")


@pytest.fixture
def other_agent(db) -> Agent:
    return issue_agent("other-agent")


@pytest.fixture
def anonymous(db) -> Agent:
    return Agent(name="anonymous", token=None, client=Client())


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_superuser("operator", "", "operator-password")


@pytest.fixture
def roomy_limits(settings):
    """Limits high enough that a test about something else never meets them."""
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 10_000
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 10_000


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def backend_waits_on_a_lock(timeout: float = 10) -> bool:
    """Whether, within `timeout`, some backend of this database waits on a lock
    (PostgreSQL): how a race test knows its second transaction is really blocked."""
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            if cursor.fetchone()[0]:
                return True
            time.sleep(0.05)
    return False


HELD = 7_310_001  # the advisory lock `new_posts_held` holds


@contextmanager
def new_posts_held(*, thread: threading.Thread | None = None) -> Iterator[Callable[[], int]]:
    """Hold new posts (PostgreSQL) inside their write's transaction, after the claim and
    the entry row are written, until the block ends: a companion (the hook through which
    the outbox writes its rows with the entry) whose rows wait for an advisory lock this
    helper holds from another session. Only posts made in `thread` are held (any, when
    None). Yields `held()`, which waits until a post is held and returns its backend's
    pid (0 if none is within 10 s)."""
    holder = other_connection(past_the_pooler=True)
    holder.execute("SELECT pg_advisory_lock(%s)", [HELD])

    def wait_in_the_write(sender, now, **kwargs):
        if thread is not None and threading.current_thread() is not thread:
            return None
        return Companion(
            table=Attempt._meta.db_table, columns=("detail",), link="receipt_id",
            # Reads `made` (the entry's CTE), so it runs after the entry; lifts the
            # claim's wait bound for itself, waits, then yields no row.
            rows_sql=f"SELECT '' FROM made WHERE (SELECT pg_advisory_xact_lock_shared({HELD}) "
            f"FROM (SELECT set_config('lock_timeout', '0', true)) AS unbounded)::text IS NULL",
            params=(), returning="id", made=lambda rows: None,
        )

    def held() -> int:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            row = holder.execute(
                "SELECT pid FROM pg_stat_activity WHERE wait_event = 'advisory' "
                "AND datname = current_database()"
            ).fetchone()
            if row:
                return row[0]
            time.sleep(0.05)
        return 0

    entry_companions.connect(wait_in_the_write, sender=Entry, weak=False)
    try:
        yield held
    finally:
        entry_companions.disconnect(wait_in_the_write, sender=Entry)
        holder.execute("SELECT pg_advisory_unlock(%s)", [HELD])
        holder.close()


def other_connection(*, past_the_pooler: bool = False) -> psycopg.Connection:
    """A second PostgreSQL session to the test database, outside Django. Past the pooler:
    to the server itself even when the tests run through PgBouncer (.ci/run), for a
    session lock, which a pooler in transaction mode would hand to other clients."""
    params = connection.settings_dict
    host, port = params["HOST"], params["PORT"] or 5432
    if past_the_pooler:
        with connection.cursor() as cursor:
            cursor.execute("SELECT host(inet_server_addr()), inet_server_port()")
            host, port = cursor.fetchone()
    return psycopg.connect(
        dbname=params["NAME"], user=params["USER"], host=host, port=port,
        password=params["PASSWORD"] or None, autocommit=True,
    )


__all__ = ["HourlyCounter", "question", "reply", "counts", "new_request_id", "issue_agent"]


@pytest.fixture(autouse=True)
def retention_cache_fresh():
    """Each test reads the console's retention values afresh (the per-process cache
    would otherwise carry one test's values, rolled back, into the next)."""
    from board.retention import policies as retention

    retention.cache_clear()
    yield
    retention.cache_clear()


@pytest.fixture(autouse=True)
def quick_passwords(settings):
    """Passwords hashed in a thousandth of a real hasher's time (tests/moderation/hashers.py);
    the console's tests use MD5's (tests/moderation/conftest.py)."""
    settings.PASSWORD_HASHERS = ["tests.moderation.hashers.QuickHasher"]
