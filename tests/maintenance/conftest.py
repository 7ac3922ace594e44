"""Fixtures for the delivery tests: short budgets, a real receiver, endpoints made through
the same service operators use, and a driver that does what the worker does."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from maintenance.deliveries import endpoints, outbox, sweep
from maintenance.deliveries.models import Delivery, Endpoint
from tests.conftest import question
from tests.maintenance.webhook_receiver import Receiver

PUBLIC_URL = "https://settle.example"
SETTLED = {"succeeded", "failed", "cancelled", "outcome_unknown"}


def broker_purge() -> None:
    """Drop the messages nobody consumed: these tests queue a send task for every entry
    (on commit, as the write path does) and run the sends themselves, so without this
    a later real worker would first wade through hundreds of stale messages."""
    from board.celery import app

    outbox.doorbell.flush()  # messages still held for this process's last posts
    try:
        app.control.purge()
    except Exception:  # a broker that is down has nothing to purge
        pass


@pytest.fixture(scope="session", autouse=True)
def _stale_messages_dropped():
    broker_purge()


@pytest.fixture
def delivery_settings(settings):
    """Budgets small enough to keep the tests fast; every attempt of the schedule at once."""
    settings.SETTLE_PUBLIC_URL = PUBLIC_URL
    settings.SETTLE_DELIVERY_TIMEOUT = timedelta(seconds=1)
    settings.SETTLE_DELIVERY_LEASE_MARGIN = timedelta(seconds=1)
    settings.SETTLE_DELIVERY_SCHEDULE = [timedelta(0)] * 3
    settings.SETTLE_DELIVERY_DEADLINE = timedelta(hours=1)
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 10_000
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 10_000
    yield settings
    broker_purge()


@pytest.fixture
def receiver():
    server = Receiver(hang_seconds=2.5)
    yield server
    server.close()


def endpoint_for(receiver: Receiver, *, name: str = "hooks", supports: str = "none") -> Endpoint:
    """An endpoint on the test receiver (loopback, so allowed private explicitly)."""
    endpoint, secret = endpoints.endpoint_add(
        name=name, url=receiver.url, supports=supports,
        lookup_url=receiver.lookup_url if supports == "lookup" else None,
        allow_private=True, private_reason="the test receiver runs on loopback",
    )
    receiver.secrets.append(secret)
    return endpoint


def post_entry(**overrides):
    return board.entry_post(
        token=None, address="127.0.0.1", fields=entry_fields_read(question(**overrides)),
        route="api",
    ).entry


def delivery_of(entry, endpoint: Endpoint | None = None) -> Delivery:
    rows = Delivery.objects.filter(entry_id=entry.pk)
    if endpoint is not None:
        rows = rows.filter(endpoint=endpoint)
    return rows.get()


def drive(delivery: Delivery, *, seconds: float = 20) -> Delivery:
    """Do what the worker does (the send task, again when due) until the delivery settles."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sweep.delivery_run(delivery_id=delivery.pk)
        delivery.refresh_from_db()
        if delivery.state in SETTLED:
            return delivery
        if delivery.state == Delivery.State.ACCEPTED and delivery.next_attempt_at:
            wait = (delivery.next_attempt_at - timezone.now()).total_seconds()
            time.sleep(min(max(wait, 0) + 0.05, 2))
    return delivery


def in_thread(function, **kwargs) -> threading.Thread:
    """Start `function(**kwargs)` in a thread that closes its own database connection
    (PostgreSQL cannot drop the test database while one is left open)."""

    def run() -> None:
        try:
            function(**kwargs)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread
