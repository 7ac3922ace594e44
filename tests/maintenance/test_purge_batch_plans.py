"""Each purge's batch query, as the purge sends it, is served by the index made for it on
PostgreSQL (SPEC 11.7: a batch costs the same at 50 million rows), ties included."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from maintenance import purges
from maintenance.deliveries import purge as delivery_purge
from maintenance.deliveries import rates as delivery_rates
from maintenance.deliveries import selectors as delivery_selectors
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from receipts.function_file import code_of
from receipts.models import Attempt, Receipt, Tombstone
from tests.conftest import is_postgres
from tests.moderation.conftest import logged_in

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not is_postgres(), reason="plans are PostgreSQL's"),
]

ROWS = 20_000


def fill(sql: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, [ROWS])


def plan_of_batch(purge, table: str, **kwargs) -> str:
    """Run one purge, find the statement that selects its batch from `table` (the first
    SELECT with LIMIT on it) and EXPLAIN it after ANALYZE."""
    with CaptureQueriesContext(connection) as captured:
        purge(now=timezone.now(), batch_size=1000, dry_run=True, **kwargs)
    batch = next(
        sql for sql in (code_of(query["sql"]) for query in captured)
        if sql.lstrip().upper().startswith("SELECT")
        and f'FROM "{table}"' in sql.replace(f"FROM {table}", f'FROM "{table}"')
        and "LIMIT" in sql.upper()
    )
    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE "{table}"')
        cursor.execute("EXPLAIN " + batch)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_receipt_batch_walks_expiry_and_id_even_when_many_share_one_expiry():
    # given: most receipts expire at one moment, all of them due (the ties that cost
    # 411 ms a batch at 5 million with the expiry-only index)
    fill(f"""
        INSERT INTO {Receipt._meta.db_table} (scope, operation, request_id, digests, state,
            result_id, first_route, attempts, first_seen_at, last_seen_at, receipt_expires_at)
        SELECT 'anonymous', 'post_entry:v1', gen_random_uuid(), '{{}}', 'succeeded', NULL,
            'api', 1, now() - interval '40 days', now() - interval '40 days',
            date_trunc('day', now()) - interval '2 days'
        FROM generate_series(1, %s)
    """)

    plan = plan_of_batch(purges.purge_expired_threads, Receipt._meta.db_table)

    assert "receipt_expiry_id" in plan, plan
    assert not re.search(r"^\s*(->\s*)?Sort\b", plan, re.M), plan


def test_the_tombstone_batch_walks_the_expiry_index():
    fill(f"""
        INSERT INTO {Tombstone._meta.db_table} (key, reason, expires_at)
        SELECT gen_random_uuid(), 1, current_date + (g %% 400) - 30
        FROM generate_series(1, %s) AS g
    """)

    plan = plan_of_batch(purges.purge_tombstones, Tombstone._meta.db_table)

    assert "tombstone_expiry" in plan, plan


def test_the_attempt_batch_walks_its_creation_index():
    fill(f"""
        INSERT INTO {Attempt._meta.db_table} (identity, route, outcome, detail, created_at)
        SELECT gen_random_uuid(), 'api', 'created', '', now() - (g %% 20) * interval '1 day'
        FROM generate_series(1, %s) AS g
    """)

    plan = plan_of_batch(purges.purge_attempts, Attempt._meta.db_table)

    assert "attempt_created" in plan, plan


def deliveries_of_two_months() -> None:
    """A quarter each succeeded, failed, cancelled and outcome_unknown, settled daily."""
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO maintenance_endpoint (name, url, secret, previous_secret, supports, "
            "lookup_url, enabled, disabled_reason, allow_private, private_reason, created_at, "
            "updated_at) VALUES ('plans', 'https://example.invalid/', 's', '', 'none', '', "
            "true, '', false, '', %s, %s) RETURNING id", [now, now],
        )
        endpoint = cursor.fetchone()[0]
    fill(f"""
        INSERT INTO {Delivery._meta.db_table} (id, endpoint_id, entry_id, state, attempts,
            deadline_at, unanswered, lookup_due, note, created_at, settled_at)
        SELECT gen_random_uuid(), {int(endpoint)}, g,
            (ARRAY['succeeded', 'failed', 'cancelled', 'outcome_unknown'])[1 + g %% 4], 1,
            now(), false, false, '', now() - (g %% 60) * interval '1 day',
            now() - (g %% 60) * interval '1 day'
        FROM generate_series(1, %s) AS g
    """)


def test_the_delivery_batch_walks_settled_final_deliveries_in_its_order():
    deliveries_of_two_months()

    plan = plan_of_batch(delivery_purge.purge_deliveries, Delivery._meta.db_table)

    assert "delivery_final_settled" in plan, plan
    assert not re.search(r"^\s*(->\s*)?Sort\b", plan, re.M), plan


def test_the_dashboards_unknown_outcomes_are_counted_by_the_state_index(operator):
    deliveries_of_two_months()
    with CaptureQueriesContext(connection) as captured:
        assert logged_in(operator).get("/console/").status_code == 200
    counting = [q["sql"] for q in captured if "outcome_unknown" in q["sql"]]
    assert counting
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Delivery._meta.db_table}")
        for sql in counting:
            cursor.execute("EXPLAIN " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            # The inbox's size by an index led by the state, each window's by the state
            # and creation (delivery_state_newest): never a scan of every delivery.
            assert "Seq Scan" not in plan, plan
            if "created_at" in sql:
                assert "delivery_state_newest" in plan, plan


def test_the_success_rates_read_each_attempts_delivery_by_its_key():
    # given: two months of deliveries, one send each, a day's worth in the rates' window
    deliveries_of_two_months()
    with connection.cursor() as cursor:
        cursor.execute(f"""
            INSERT INTO {DeliveryAttempt._meta.db_table} (attempt_id, delivery_id, kind,
                started_at, duration_ms, status_code, error, request_left)
            SELECT gen_random_uuid(), id, 'send', created_at, 100, 200, '', true
            FROM {Delivery._meta.db_table}
        """)
    # the job's first run recounts the whole window: the most it ever reads
    with CaptureQueriesContext(connection) as captured:
        delivery_rates.endpoint_rates_roll_up(now=timezone.now())
    with CaptureQueriesContext(connection) as read:
        overview = delivery_selectors.endpoints_overview()
    assert [row.recent_attempts for row in overview] == [ROWS // 60]
    counting = next(q["sql"] for q in captured if DeliveryAttempt._meta.db_table in q["sql"])
    assert not any(DeliveryAttempt._meta.db_table in q["sql"] for q in read)

    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Delivery._meta.db_table}")
        cursor.execute(f"ANALYZE {DeliveryAttempt._meta.db_table}")
        cursor.execute("EXPLAIN " + counting)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    # then: the window's attempts by their start, each one's delivery by primary key;
    # never every delivery read to match them
    assert "attempt_started" in plan, plan
    assert f"Seq Scan on {Delivery._meta.db_table}" not in plan, plan
    assert "Hash Join" not in plan, plan
