"""How fast an erasure runs (SPEC 8.4) while another principal keeps posting.

Seeds ERASE_ENTRIES (10,000; SETTLE_BENCH_ERASE_ENTRIES to change) live entries of one
principal, with their receipts, then runs `moderation.erasure.principal_erase` (what
`manage.py erase` runs) while a thread keeps posting another principal's questions
through the real write path, and reports entries erased per second (the issue's target:
at least 2,000 on PostgreSQL on this machine) and the posts answered meanwhile.

Run: `DATABASE_URL=postgres://postgres@127.0.0.1:5432/settle_bench make bench`
(or `python -m pytest tests/bench/bench_erase.py -s -o python_files='bench_*.py'`).
"""

import os
import threading
import time

import pytest
from django.db import connection, connections
from django.utils import timezone

from board import services as board
from board.models import Entry, Principal
from moderation import erasure
from tests.conftest import question

ERASE_ENTRIES = int(os.environ.get("SETTLE_BENCH_ERASE_ENTRIES", "10000"))
POSTS_PER_SECOND = 50
TARGET_ENTRIES_PER_SECOND = 2_000

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def seed_entries(principal: Principal, count: int) -> None:
    """`count` questions of `principal` and their receipts, as entry_post writes them
    (digests empty: an erasure never reads them). Two INSERT ... SELECT: seconds, where
    10,000 posts would take minutes."""
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO board_entry (type, parent_id, title, body, actor_name, actor_model,
                actor_trigger, submission_mode, visible, deleted_at, route, source,
                principal_id, created_at)
            SELECT 'question', NULL, 'Spam ' || n, 'A body to erase.', 'spammer', '', '',
                'autonomous', true, NULL, 'api', 'bench', %(principal)s,
                %(now)s + n * interval '1 millisecond'
            FROM generate_series(1, %(count)s) AS n
            """,
            {"principal": principal.pk, "now": now, "count": count},
        )
        cursor.execute(
            """
            INSERT INTO receipts_receipt (scope, operation, request_id, digests, state,
                result_id, first_route, attempts, first_seen_at, last_seen_at,
                receipt_expires_at, deleted_at)
            SELECT %(scope)s, 'post_entry:v1', gen_random_uuid(), '{}'::jsonb,
                'succeeded', e.id, 'api', 1, e.created_at, e.created_at,
                e.created_at + interval '30 days', NULL
            FROM board_entry e WHERE e.principal_id = %(principal)s
            """,
            {"scope": f"{Principal.KEY_PREFIX}{principal.pk}", "principal": principal.pk},
        )
        cursor.execute("VACUUM ANALYZE board_entry")
        cursor.execute("VACUUM ANALYZE receipts_receipt")


class Poster(threading.Thread):
    def __init__(self, token: str):
        super().__init__(daemon=True)
        self.token = token
        self.stop = threading.Event()
        self.accepted = 0
        self.refused = 0

    def run(self):
        try:
            while not self.stop.is_set():
                try:
                    board.entry_post(
                        token=self.token, address="127.0.0.9", body=question(), route="api"
                    )
                    self.accepted += 1
                except Exception:
                    self.refused += 1
                self.stop.wait(1 / POSTS_PER_SECOND)
        finally:
            connections.close_all()


def test_erase_rate_while_posts_continue(settings):
    settings.SETTLE_SOURCE_HOURLY_LIMIT = 10**9
    settings.SETTLE_OVERALL_HOURLY_LIMIT = 10**9
    spammer, _ = board.token_issue(name="spammer")
    _, token = board.token_issue(name="researcher")
    seed_entries(spammer, ERASE_ENTRIES)

    poster = Poster(token)
    poster.start()
    time.sleep(0.2)
    began = time.monotonic()
    done = erasure.principal_erase(
        actor="bench", name="spammer", reason="bench",
        batch_size=settings.SETTLE_ERASE_BATCH_SIZE,
    )
    elapsed = time.monotonic() - began
    poster.stop.set()
    poster.join()

    rate = done.done / elapsed
    print(
        f"\nerased {done.done:,} entries in {elapsed:.2f}s (batches of "
        f"{settings.SETTLE_ERASE_BATCH_SIZE}): {rate:,.0f} entries/s "
        f"(target >= {TARGET_ENTRIES_PER_SECOND:,})"
    )
    print(f"posts accepted meanwhile: {poster.accepted} (refused: {poster.refused})")
    assert done.done == ERASE_ENTRIES and done.state == "finished"
    assert not Entry.objects.filter(principal=spammer, deleted_at__isnull=True).exists()
    assert poster.accepted > 0 and poster.refused == 0


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-s", "-p", "no:randomly"]))
