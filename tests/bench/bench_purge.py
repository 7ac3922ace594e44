"""How fast the thread purge runs on PostgreSQL, and how small a tombstone is.

Seeds 200,000 expired single-entry threads (question plus receipt), then runs
`purge_expired_threads` while another thread keeps posting through
`board.services.entry_post`, and reports:

* entries purged per second (target: at least 15,000);
* bytes on disk per tombstone, table plus index, measured right after the purge wrote
  them (target: at most 100).

Run: `DATABASE_URL=postgres://postgres@127.0.0.1:5432/settle_bench make bench`
(or `python -m pytest tests/bench/bench_purge.py -s` with the same variable).
"""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from board import services as board
from board.entries.fields import entry_fields_read
from board.models import Entry
from maintenance.purges import purge_expired_threads
from receipts.models import Receipt, Tombstone
from tests.conftest import question

THREADS = 200_000
BATCH_SIZE = 10_000
POSTS_PER_SECOND = 100
TARGET_ENTRIES_PER_SECOND = 15_000
TARGET_BYTES_PER_TOMBSTONE = 100

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def seed_expired_threads(count: int) -> None:
    """Insert `count` questions and their receipts, all expired.

    A benchmark's seed, not test data: two INSERT ... SELECT over generate_series, which
    is seconds instead of the minutes 200,000 calls of entry_post would take. The rows
    are what entry_post writes (a question, its receipt with result_id), but the digests
    are empty: the purge never reads them.
    """
    created = timezone.now() - timedelta(days=40)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO board_entry (type, parent_id, title, body, actor_name, actor_model,
                actor_trigger, submission_mode, visible, deleted_at, route, source,
                principal_id, created_at)
            SELECT 'question', NULL, 'Seeded question ' || n, 'A body to purge.', 'bench',
                '', '', 'autonomous', true, NULL, 'api', 'bench', NULL,
                %(created)s + n * interval '1 millisecond'
            FROM generate_series(1, %(count)s) AS n
            """,
            {"created": created, "count": count},
        )
        cursor.execute(
            """
            INSERT INTO receipts_receipt (scope, operation, request_id, digests, state,
                result_id, first_route, attempts, first_seen_at, last_seen_at,
                receipt_expires_at, deleted_at)
            SELECT 'anonymous', 'post_entry:v1', gen_random_uuid(), '{}'::jsonb,
                'succeeded', e.id, 'api', 1, e.created_at, e.created_at,
                e.created_at + interval '30 days', NULL
            FROM board_entry e
            """
        )
        # A settled table, as a live board's would be; and autovacuum, woken by the bulk
        # insert, does not then compete with the purge for the CPU.
        cursor.execute("VACUUM ANALYZE board_entry")
        cursor.execute("VACUUM ANALYZE receipts_receipt")


class Poster(threading.Thread):
    """Keeps posting new questions through the real write path until stopped, at up to
    POSTS_PER_SECOND (a busy board; flat out it would mostly measure the GIL, since it
    shares this process with the purge)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.accepted = 0
        self.refused = 0

    def run(self):
        try:
            while not self.stop.is_set():
                try:
                    board.entry_post(
                        token=None, address="127.0.0.9",
                        fields=entry_fields_read(question()), route="api",
                    )
                    self.accepted += 1
                except Exception:
                    self.refused += 1
                self.stop.wait(1 / POSTS_PER_SECOND)
        finally:
            connections.close_all()


def test_purge_rate_and_tombstone_size(settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 10**9
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 10**9

    # given
    began = time.monotonic()
    seed_expired_threads(THREADS)
    print(f"\nseeded {THREADS:,} expired threads in {time.monotonic() - began:.1f}s")
    before_bytes = _tombstone_bytes()

    # when: the purge runs while posts keep arriving
    poster = Poster()
    poster.start()
    time.sleep(0.2)
    began = time.monotonic()
    result = purge_expired_threads(
        now=timezone.now(), batch_size=BATCH_SIZE, time_budget=timedelta(minutes=10)
    )
    elapsed = time.monotonic() - began
    tombstone_bytes = _tombstone_bytes()
    poster.stop.set()
    poster.join()

    # then
    rate = result.counts["entries"] / elapsed
    per_tombstone = (tombstone_bytes - before_bytes) / result.counts["tombstones"]
    print(
        f"purged {result.counts['entries']:,} entries in {elapsed:.2f}s "
        f"({result.batches} batches of {BATCH_SIZE:,}): {rate:,.0f} entries/s "
        f"(target >= {TARGET_ENTRIES_PER_SECOND:,})"
    )
    print(
        f"tombstones: {result.counts['tombstones']:,} taking {tombstone_bytes:,} bytes "
        f"(table + index): {per_tombstone:.1f} bytes each "
        f"(target <= {TARGET_BYTES_PER_TOMBSTONE})"
    )
    print(f"posts accepted meanwhile: {poster.accepted} (refused: {poster.refused})")
    assert result.counts["threads"] == THREADS and result.complete
    assert Tombstone.objects.count() == THREADS
    assert Receipt.objects.count() == Entry.objects.count() == poster.accepted
    assert poster.accepted > 0 and poster.refused == 0
    assert rate >= TARGET_ENTRIES_PER_SECOND
    assert per_tombstone <= TARGET_BYTES_PER_TOMBSTONE


def _tombstone_bytes() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size(%s::regclass)", [Tombstone._meta.db_table])
        return cursor.fetchone()[0]


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-s", "-p", "no:randomly"]))
