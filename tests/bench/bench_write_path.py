"""What the idempotency engine costs on the write path, as ratios from one run.

Run with `make bench` (add DATABASE_URL for PostgreSQL). Measures, through the service
every route calls, a fresh post, a replay of it, and a conflict, against a bare
`Entry.objects.create` of the same row as the baseline.
"""

import time

import pytest
from django.db import connection
from django.utils import timezone

from board import services
from board.entries.fields import entry_fields_read
from board.models import Entry
from tests.conftest import question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]

ROUNDS = 300


def per_call(calls) -> float:
    started = time.perf_counter()
    for call in calls:
        call()
    return (time.perf_counter() - started) / len(calls)


def post(payload: dict):
    return lambda: services.entry_post(
        token=None, address="127.0.0.1", fields=entry_fields_read(payload), route="api"
    )


def bare_create():
    Entry.objects.create(
        type="question", title="t", body="b", actor_name="a", submission_mode="autonomous",
        route="api", source="ip:127.0.0.1", created_at=timezone.now(),
    )


def test_write_path_costs(settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = settings.SETTLE_OVERALL_HOURLY_LIMIT = 10 * ROUNDS
    payloads = [question() for _ in range(ROUNDS)]

    baseline = per_call([bare_create] * ROUNDS)
    fresh = per_call([post(p) for p in payloads])
    replay = per_call([post(p) for p in payloads])
    conflict_calls = [post({**p, "body": "changed"}) for p in payloads]
    started = time.perf_counter()
    for call in conflict_calls:
        try:
            call()
        except Exception:
            pass
    conflict = (time.perf_counter() - started) / ROUNDS

    print(
        f"\n[{connection.vendor}] {ROUNDS} calls each; bare insert {baseline * 1e3:.2f} ms/call"
        f"\n  fresh post    {fresh / baseline:5.1f}x bare insert ({fresh * 1e3:.2f} ms)"
        f"\n  replay        {replay / baseline:5.1f}x bare insert"
        f" ({replay / fresh:.2f}x a fresh post)"
        f"\n  conflict      {conflict / baseline:5.1f}x bare insert"
        f" ({conflict / fresh:.2f}x a fresh post)"
    )
    assert Entry.objects.count() == 2 * ROUNDS
