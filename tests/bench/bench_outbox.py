"""What the outbox adds to the write path: a fresh post with no endpoint against one
with two enabled endpoints (two delivery rows in the entry's transaction, one
`INSERT ... SELECT`, and two send tasks queued on commit), in the same run.

Run: `make bench PYTEST_ARGS="tests/bench/bench_outbox.py"` (add DATABASE_URL and
CELERY_BROKER_URL for PostgreSQL and Redis). Nothing consumes the queued tasks.
"""

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from board import services
from board.celery import app
from board.entries.fields import entry_fields_read
from maintenance.deliveries import endpoints
from maintenance.deliveries.models import Delivery
from tests.conftest import question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]

ROUNDS = 300
BLOCKS = 6


def per_post(count: int) -> float:
    payloads = [question() for _ in range(count)]
    started = time.perf_counter()
    for payload in payloads:
        services.entry_post(
            token=None, address="127.0.0.1", fields=entry_fields_read(payload), route="api"
        )
    return (time.perf_counter() - started) / count


def statements_per_post() -> int:
    with CaptureQueriesContext(connection) as queries:
        services.entry_post(
            token=None, address="127.0.0.1", fields=entry_fields_read(question()), route="api"
        )
    return len(queries)


def test_outbox_cost(settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = settings.SETTLE_OVERALL_HOURLY_LIMIT = 10 * ROUNDS
    settings.SETTLE_PUBLIC_URL = "https://settle.example"
    names = ("first", "second")
    for name in names:
        endpoints.endpoint_add(name=name, url=f"https://{name}.example/hook")
    per_post(20)  # warm up
    # Blocks alternate so that drift on a shared machine hits both sides alike; the
    # fastest block of each side is reported.
    blocks: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(BLOCKS):
        for enabled in (False, True):
            for name in names:
                (endpoints.endpoint_enable if enabled else endpoints.endpoint_disable)(name=name)
            blocks[enabled].append(per_post(ROUNDS // BLOCKS))
    statements_with = statements_per_post()
    for name in names:
        endpoints.endpoint_disable(name=name)
    statements_without = statements_per_post()
    without, with_two = min(blocks[False]), min(blocks[True])

    print(
        f"\n[{connection.vendor}] {ROUNDS} fresh posts each, best of {BLOCKS} alternating blocks"
        f"\n  no endpoint      {without * 1e3:.2f} ms/post, {statements_without} statements"
        f"\n  two endpoints    {with_two * 1e3:.2f} ms/post, {statements_with} statements"
        f"  ({with_two / without:.2f}x)"
    )
    app.control.purge()  # the queued sends were never meant to run
    # The INSERT ... SELECT runs (and is counted) with or without endpoints.
    assert statements_with == statements_without
    # two a post: the warm-up, the enabled blocks, and the statement count
    assert Delivery.objects.count() == 2 * (20 + ROUNDS // BLOCKS * BLOCKS + 1)
