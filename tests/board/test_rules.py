"""Who the caller is and its hourly limit, written twice: in Python (board/posting/callers.py,
board/posting/limits.py), which SQLite's admission runs, and in SQL, the function
`board_post_admit` (board/sql/board_post_admit.sql) of PostgreSQL's. Compared on generated
input on PostgreSQL, where both exist."""

import uuid

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board.exceptions import Unauthorized
from board.models import PostingPolicy, Principal
from board.posting import callers, limits, statements
from moderation import actions as moderation
from receipts.models import Receipt

pytestmark = pytest.mark.django_db

ADDRESS = "203.0.113.7"
limits_or_none = st.none() | st.integers(min_value=0, max_value=10**6)


@pytest.mark.postgres
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    presented=st.sampled_from(["live", "revoked", "unknown", "none"]),
    principal_limit=limits_or_none,
    console_limit=limits_or_none,
    overall_limit=limits_or_none,
    anonymous_allowed=st.booleans(),
    has_receipt=st.booleans(),
)
def test_the_caller_and_its_limits_are_the_same_in_python_and_sql(
    presented, principal_limit, console_limit, overall_limit, anonymous_allowed, has_receipt
):
    PostingPolicy.objects.update_or_create(pk=1, defaults={
        "source_hourly_limit": console_limit, "overall_hourly_limit": overall_limit,
    })
    name = f"rules-{uuid.uuid4().hex[:8]}"
    _, token = moderation.token_issue(actor="test", name=name, hourly_limit=principal_limit)
    if presented == "revoked":
        moderation.token_revoke(actor="test", name=name)
    token = {"unknown": "settle_unknown", "none": None}.get(presented, token)
    request_id = uuid.uuid4()

    # Python: the rules as board/posting/callers.py and board/posting/limits.py say them.
    policy, found = statements.posting_read(None if token is None else callers.token_hash(token))
    try:
        caller = found or callers.anonymous_caller(token, ADDRESS)
    except Unauthorized:
        caller = None
    with override_settings(SETTLE_ALLOW_ANONYMOUS=anonymous_allowed):
        try:
            admitted = (found or callers.anonymous_caller(token, ADDRESS, posting=True)) is not None
        except Unauthorized:
            admitted = False
    if has_receipt and caller is not None:
        Receipt.objects.create(
            scope=caller.scope, operation="post_entry:v1", request_id=request_id, digests={},
            first_route="api", first_seen_at=timezone.now(), last_seen_at=timezone.now(),
            receipt_expires_at=timezone.now(),
        )
    in_python = (
        caller.source if caller else callers.address_source(ADDRESS),
        *limits.hourly_limits(caller.principal if caller else None, policy),
        admitted,
        has_receipt and caller is not None,
    )

    # SQL: the function PostgreSQL's admission calls, with the arguments a post gives it.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT seen, source, source_limit, overall_limit, admitted "
            "FROM board_post_admit(%s, %s, %s, %s, %s, %s, %s, %s, "
            "CAST(%s AS bigint), CAST(%s AS bigint), %s, false)",
            [
                Principal.KEY_PREFIX, None if token is None else callers.token_hash(token),
                callers.address_source(ADDRESS), callers.ANONYMOUS_SCOPE, "post_entry:v1",
                request_id, limits.hour_of(timezone.now()), limits.OVERALL_SOURCE,
                django_settings.SETTLE_SOURCE_HOURLY_LIMIT,
                django_settings.SETTLE_OVERALL_HOURLY_LIMIT,
                token is None and anonymous_allowed,
            ],
        )
        seen, source, source_limit, overall, sql_admitted = cursor.fetchone()

    assert (source, source_limit, overall, bool(sql_admitted), bool(seen)) == in_python


def test_a_token_callers_scope_is_its_principals_key():
    # The statements read a token's caller with the principal's key written in SQL; it
    # must be the key Python writes (Principal.scope), which receipts are found by.
    principal, token = moderation.token_issue(actor="test", name=f"rules-{uuid.uuid4().hex[:8]}")

    _, found = statements.posting_read(callers.token_hash(token))

    assert found.scope == found.source == principal.scope
