"""Several gunicorn worker processes share nothing but the database: the claim and the
hourly counters must hold across them (SPEC 1, 11.1)."""

import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from board.models import Entry
from receipts.models import Receipt
from tests.conftest import question

pytestmark = pytest.mark.django_db(transaction=True)

def post(base: str, payload: dict) -> int:
    request = urllib.request.Request(
        f"{base}/api/v1/entries", data=json.dumps(payload).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    status = None
    for _ in range(3):
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            status = error.code
            if json.loads(error.read())["error"]["code"] not in ("in_progress", "unavailable"):
                return status
    return status


@pytest.mark.parametrize(
    "gunicorn", [{"SETTLE_SOURCE_HOURLY_LIMIT": "1000"}], indirect=True
)
def test_it_saves_one_entry_for_identical_requests_across_worker_processes(gunicorn):
    payload = question()

    with ThreadPoolExecutor(max_workers=24) as pool:
        statuses = list(pool.map(lambda _: post(gunicorn, payload), range(24)))

    assert sorted(statuses) == [200] * 23 + [201]
    assert Entry.objects.count() == 1
    assert Receipt.objects.count() == 1


@pytest.mark.parametrize("gunicorn", [{"SETTLE_SOURCE_HOURLY_LIMIT": "5"}], indirect=True)
def test_it_holds_the_source_limit_across_worker_processes(gunicorn):
    payloads = [question() for _ in range(12)]

    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = list(pool.map(lambda p: post(gunicorn, p), payloads))

    assert sorted(statuses) == [201] * 5 + [429] * 7
    assert Entry.objects.count() == 5
