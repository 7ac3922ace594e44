"""On SQLite, the purges' selections are served by the partial indexes made for them
(SPEC 11.7: a batch costs the same at a million entries): SQLite uses a partial index only
when the statement repeats the index's condition in its form."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from maintenance import purges
from maintenance.deliveries import purge as delivery_purge
from maintenance.deliveries.models import Delivery
from receipts.function_file import code_of
from tests.conftest import is_postgres

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(is_postgres(), reason="SQLite's planner"),
]


def plans_of(purge, table: str) -> list[str]:
    """EXPLAIN QUERY PLAN of every SELECT the purge sent with `table` after FROM."""
    with CaptureQueriesContext(connection) as captured:
        purge(now=timezone.now(), batch_size=1000, dry_run=True)
    selects = [
        sql for sql in (code_of(query["sql"]) for query in captured)
        if sql.lstrip().upper().startswith("SELECT")
        and (f'FROM "{table}"' in sql or f"FROM {table} " in sql)
    ]
    assert selects
    plans = []
    with connection.cursor() as cursor:
        for sql in selects:
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            plans.append("\n".join(row[3] for row in cursor.fetchall()))
    return plans


def test_the_delivery_batch_walks_its_partial_index_without_sorting():
    (plan,) = plans_of(delivery_purge.purge_deliveries, Delivery._meta.db_table)

    assert "USING INDEX delivery_final_settled" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


def test_the_held_texts_are_found_by_their_partial_index():
    plans = plans_of(purges.purge_deletion_records, "board_entry")

    held_texts = [plan for plan in plans if "entry_deleted" in plan]
    assert held_texts, plans
    assert all("entry_deleted_text_kept" in plan for plan in held_texts), held_texts
