"""What the console reads beside its lists is read by index on PostgreSQL (SPEC 11.7: a
page costs the same whatever the board holds): what a hold covers, by the agent's entries
and their threads' replies; the audit log's filter menus, by a seek per value."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from board.models import Entry
from board.retention import holds
from moderation import actions as moderation
from moderation import selectors
from moderation.models import AuditEvent
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


def test_the_audit_filter_menus_seek_each_value_without_reading_the_log():
    # given: a log of 3,000 events by two operators, of three actions
    AuditEvent.objects.bulk_create(
        AuditEvent(created_at=timezone.now(), actor=("alice", "bob")[n % 2],
                   action=("hold_add", "posting_pause", "token_issue")[n % 3])
        for n in range(3_000)
    )

    with CaptureQueriesContext(connection) as captured:
        actors, actions = selectors.audit_filter_choices()

    assert (actors, actions) == (["alice", "bob"], ["hold_add", "posting_pause", "token_issue"])
    # a seek per value found, and one that finds none, for each menu
    assert len(captured) == (2 + 1) + (3 + 1)
    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE "{AuditEvent._meta.db_table}"')
    for plan in plans_of([q["sql"] for q in captured]):
        assert "Seq Scan" not in plan and "Unique" not in plan, plan
