"""What a hold covers, as the retention page counts it, is read by index on PostgreSQL:
the agent's entries by `principal_id`, their threads' replies by the parent index, never
a scan of every entry (SPEC 11.7: the page costs the same whatever the board holds)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from board.models import Entry
from board.retention import holds
from moderation import actions as moderation
from tests.conftest import is_postgres, issue_agent
from tests.seeding import entries_seed

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("roomy_limits"),
    pytest.mark.skipif(not is_postgres(), reason="plans are PostgreSQL's"),
]


def plans_of(statements: list[str]) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE "{Entry._meta.db_table}"')
        plans = []
        for sql in statements:
            cursor.execute("EXPLAIN " + sql)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


def test_a_hold_on_an_agent_counts_its_threads_without_a_scan_of_entries():
    # given: a board of 5,000 entries, and a held agent with one thread of three
    entries_seed(token=issue_agent("crowd").token, count=5_000, replies_per_question=9)
    held = issue_agent("held")
    entries_seed(token=held.token, count=3, replies_per_question=2)
    hold = moderation.hold_add(actor="operator", reason="legal", principal="held")

    with CaptureQueriesContext(connection) as captured:
        covers = holds.hold_covers(hold)

    assert (covers["entries"], covers["thread_count"], covers["more"]) == (3, 1, False)
    reads = [q["sql"] for q in captured if q["sql"].lstrip().upper().startswith("SELECT")]
    for plan in plans_of(reads):
        assert "Seq Scan on board_entry" not in plan, plan
