"""The engine's rules written twice, in Python and in SQL, compared on generated input:
the replay's verdict (receipts.services._outcome, and on PostgreSQL the function
`receipts_replay`, receipts/sql/receipts_replay.sql) and the attempt log's `detail`
(receipts.statements.outcome_detail, which receipts.services.attempt_detail applies, and
the detail that function logs)."""

import json
import uuid
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
from receipts.fingerprint import field_digests, packed_digests, per_field_packed
from receipts.models import Attempt, Receipt
from receipts.statements import outcome_detail

pytestmark = pytest.mark.django_db

contents = st.dictionaries(st.sampled_from(["title", "body", "type", "actor"]),
                           st.sampled_from(["a1", "b2", None]), max_size=4)
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
    saved=contents,
    incoming=contents,
    form=st.sampled_from(["packed", "per_field", "json"]),
)
def test_the_replay_verdict_is_the_same_in_python_and_sql(
    deleted, expires_in, saved, incoming, form
):
    # `form`: the receipt keeps its digests packed, as new receipts do; or 16 bytes a
    # field, or as JSON, as receipts made before the packed form do.
    now = timezone.now()
    receipt = Receipt.objects.create(
        scope="rules", operation="post_entry:v1", request_id=uuid.uuid4(),
        state=Receipt.State.DELETED if deleted else Receipt.State.SUCCEEDED,
        receipt_expires_at=now + timedelta(seconds=expires_in),
        digests=field_digests(saved) if form == "json" else None,
        packed_digests=(
            packed_digests(saved) if form == "packed"
            else per_field_packed(saved) if form == "per_field"
            else None
        ),
        result_id=1, first_route="api", first_seen_at=now, last_seen_at=now,
    )
    outcome = services._outcome(receipt, incoming, now)
    identity = uuid.uuid4()

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT outcome FROM receipts_replay(%s, %s, %s, %s, CAST(%s AS jsonb), %s, %s, "
            "%s, %s, 'api', 1000, false)",
            [receipt.scope, receipt.operation, receipt.request_id, now,
             json.dumps(field_digests(incoming)), packed_digests(incoming),
             per_field_packed(incoming), Receipt.State.DELETED.value, identity],
        )
        in_sql = cursor.fetchone()[0]

    assert in_sql == outcome
    logged = Attempt.objects.get(identity=identity)
    assert (logged.outcome, logged.detail) == (in_sql, outcome_detail(outcome))


@quick
@given(error=errors)
def test_the_attempt_detail_is_the_same_in_the_engine_and_its_statements(error):
    outcome = "replayed" if error is None else error.code

    assert services.attempt_detail(error) == outcome_detail(outcome)
