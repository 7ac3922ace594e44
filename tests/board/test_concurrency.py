"""Identical requests arriving at once save one entry (SPEC 11.1), with real threads, each
on its own database connection."""

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from board.models import Entry
from receipts.models import Receipt
from tests.conftest import question

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("roomy_limits")]

RETRYABLE = {"in_progress", "unavailable"}


def send(payloads: list[dict], start: threading.Barrier) -> list[int]:
    """One client on its own connection: waits for the others, then posts each payload,
    retrying once when told the request is in progress or the database was busy."""
    client = Client()
    statuses = []
    try:
        start.wait()
        for payload in payloads:
            response = client.post("/api/v1/entries", payload, content_type="application/json")
            statuses.append(response.status_code)
            if response.status_code >= 400 and response.json()["error"]["code"] in RETRYABLE:
                response = client.post("/api/v1/entries", payload, content_type="application/json")
                statuses.append(response.status_code)
        return statuses
    finally:
        connection.close()


def run_clients(batches: list[list[dict]]) -> list[int]:
    start = threading.Barrier(len(batches))
    with ThreadPoolExecutor(max_workers=len(batches)) as pool:
        return [s for statuses in pool.map(lambda b: send(b, start), batches) for s in statuses]


def test_it_saves_one_entry_for_32_identical_requests_at_once(db):
    payload = question()

    statuses = run_clients([[payload] for _ in range(32)])

    answered = [s for s in statuses if s in (200, 201)]
    assert answered.count(201) == 1
    assert answered.count(200) == 31
    assert set(statuses) <= {200, 201, 409, 503}
    assert Entry.objects.count() == 1
    assert Receipt.objects.count() == 1
    assert Receipt.objects.get().attempts == len(answered)


def test_it_saves_20_entries_for_20_requests_sent_5_times_each(db):
    sends = [question() for _ in range(20)] * 5
    random.Random(7).shuffle(sends)

    statuses = run_clients([sends[i::16] for i in range(16)])

    answered = [s for s in statuses if s in (200, 201)]
    assert answered.count(201) == 20
    assert answered.count(200) == 80
    assert Entry.objects.count() == 20
    assert Receipt.objects.count() == 20
