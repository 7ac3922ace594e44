"""The engine's rules written twice, in Python and in SQL, compared on generated input:
the replay's verdict (receipts.services._verdict and receipts/sql/postgresql.py
OUTCOME_SQL) and the attempt log's `detail` (receipts.services.attempt_detail,
receipts.statements.outcome_detail and DETAIL_SQL)."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receipts import services
from receipts.exceptions import (
    OutcomeUnavailable,
    RequestConflict,
    RequestDeleted,
    RequestExpired,
    RequestInProgress,
)
from receipts.models import Receipt
from receipts.sql.postgresql import DETAIL_SQL, OUTCOME_SQL
from receipts.statements import outcome_detail

pytestmark = pytest.mark.django_db

digests = st.dictionaries(st.sampled_from(["title", "body", "type", "actor"]),
                          st.sampled_from(["a1", "b2", "c3"]), max_size=4)
errors = st.sampled_from([
    None,
    RequestConflict(conflicting_fields=["body"], existing_id=1),
    RequestDeleted(),
    RequestExpired(),
    RequestInProgress(),
    OutcomeUnavailable(outcome=OutcomeUnavailable.UNKNOWN),
])
quick = settings(max_examples=60, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.postgres
@quick
@given(
    deleted=st.booleans(),
    expires_in=st.integers(min_value=-3, max_value=3),
    saved=digests,
    incoming=digests,
)
def test_the_replay_verdict_is_the_same_in_python_and_sql(deleted, expires_in, saved, incoming):
    now = timezone.now()
    receipt = Receipt(
        state=Receipt.State.DELETED if deleted else Receipt.State.SUCCEEDED,
        receipt_expires_at=now + timedelta(seconds=expires_in),
        digests=saved,
        result_id=1,
    )
    verdict = services._verdict(receipt, incoming, now)

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {OUTCOME_SQL} FROM (SELECT %(state)s AS state, "
            f"%(expires)s::timestamptz AS receipt_expires_at, %(saved)s::jsonb AS digests) r",
            {"state": receipt.state, "expires": receipt.receipt_expires_at,
             "saved": json.dumps(saved), "digests": json.dumps(incoming), "now": now,
             "deleted": Receipt.State.DELETED.value},
        )
        in_sql = cursor.fetchone()[0]

    assert in_sql == ("replayed" if verdict is None else verdict.code)


@quick
@given(error=errors)
def test_the_attempt_detail_is_the_same_in_python_and_sql(error):
    outcome = "replayed" if error is None else error.code

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {DETAIL_SQL} FROM (SELECT %s AS outcome) AS logged", [outcome])
        in_sql = cursor.fetchone()[0]

    assert services.attempt_detail(error) == outcome_detail(outcome) == in_sql
