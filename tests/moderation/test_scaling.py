"""The console's busiest pages answer in a fixed number of queries, however big the board."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from board.models import Entry
from receipts.models import Attempt, Receipt
from tests.moderation.conftest import logged_in
from tests.seeding import RECEIPT_BATCH

pytestmark = pytest.mark.django_db

OUTCOMES = ["created", "replayed", "conflict", "rate_limited"]


def grow_board(to: int) -> None:
    """Add rows until the board holds `to` entries, each with a receipt and an attempt.

    bulk_create bypasses the services (and so the receipt engine); that is acceptable
    here only, where the point is volume, not realistic history: 10,000 posts through
    the API would take most of a minute.
    """
    now = timezone.now()
    start = Entry.objects.count()
    entries = Entry.objects.bulk_create(
        Entry(
            type="question",
            title=f"Question {i}",
            body=f"Body {i}",
            actor_name=f"bot-{i % 7}",
            submission_mode="autonomous",
            visible=i % 10 != 0,
            route="api",
            source="ip:127.0.0.1",
            created_at=now - timedelta(minutes=(i * 17) % (48 * 60)),
        )
        for i in range(start, to)
    )
    Receipt.objects.bulk_create((
        Receipt(
            scope="anonymous",
            operation="post_entry:v1",
            request_id=uuid.uuid4(),
            digests={},
            result_id=entry.pk,
            first_route="api",
            first_seen_at=entry.created_at,
            last_seen_at=entry.created_at,
            receipt_expires_at=entry.created_at + timedelta(days=30),
        )
        for entry in entries
    ), batch_size=RECEIPT_BATCH)
    Attempt.objects.bulk_create(
        Attempt(
            identity=uuid.uuid4(),
            route="api",
            outcome=OUTCOMES[i % len(OUTCOMES)],
            created_at=now - timedelta(minutes=i % (24 * 60)),
        )
        for i in range(start, to)
    )


def queries_for(client, path: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return len(captured)


def test_entries_and_dashboard_take_as_many_queries_for_10000_entries_as_for_100(moderator):
    client = logged_in(moderator)
    pages = [
        "/console/entries/",
        "/console/entries/?visibility=public&q=Question&page=2",
        "/console/",
    ]

    grow_board(100)
    for path in pages:
        queries_for(client, path)  # warm caches (content types, session) once
    small = {path: queries_for(client, path) for path in pages}

    grow_board(10_000)
    assert Entry.objects.count() == 10_000
    large = {path: queries_for(client, path) for path in pages}

    print(f"\nqueries with 100 entries: {small}\nqueries with 10,000 entries: {large}")
    assert small == large
    # Every logged-in page also records the session's last request (moderation/access/sessions.py:
    # an UPDATE in a savepoint, 3 of these).
    assert max(large.values()) <= 13
