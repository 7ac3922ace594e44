"""The write path's rules written twice, in Python, which SQLite's engine runs, and in
SQL, PostgreSQL's: who the caller is and its hourly limit (board/posting/callers.py,
board/posting/limits.py; the function `board_post_admit`, board/sql/board_post_admit.sql),
and a reply's guard (board/posting/engines/sqlite.py `question_open`;
board/sql/postgresql/question_open.sql). Compared on generated input on PostgreSQL,
where both exist."""

import uuid
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board.exceptions import ParentUnavailable, Unauthorized
from board.models import Entry, PostingPolicy, Principal
from board.posting import callers, limits, statements
from board.posting.engines import postgresql as engines_postgresql
from board.posting.engines import sqlite as engines_sqlite
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


# What may keep a reply's parent from being open, each alone or two together.
FLAWS = ("reply", "hidden", "deleted", "receipt_deleted", "expired", "other_operation",
         "absent")


@pytest.mark.postgres
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flaws=st.sets(st.sampled_from(FLAWS), max_size=2), at_expiry=st.booleans())
def test_a_replys_guard_is_the_same_in_python_and_sql(flaws, at_expiry):
    now = timezone.now()
    entry = {"body": "b", "actor_name": "rules", "submission_mode": "autonomous",
             "route": "api", "source": "rules", "created_at": now}
    question = Entry.objects.create(type=Entry.Type.QUESTION, title="t", **entry)
    parent = question
    if "reply" in flaws:
        parent = Entry.objects.create(type=Entry.Type.REPLY, parent=question, **entry)
    Entry.objects.filter(pk=parent.pk).update(
        visible="hidden" not in flaws, deleted_at=now if "deleted" in flaws else None
    )
    expires_in = (0 if at_expiry else -1) if "expired" in flaws else 1
    Receipt.objects.create(
        scope="rules", operation="other:v1" if "other_operation" in flaws else "post_entry:v1",
        request_id=uuid.uuid4(), digests={}, result_id=parent.pk,
        state=Receipt.State.DELETED if "receipt_deleted" in flaws else Receipt.State.SUCCEEDED,
        first_route="api", first_seen_at=now, last_seen_at=now,
        receipt_expires_at=now + timedelta(seconds=expires_in),
    )
    asked = {"parent_id": parent.pk + 1_000_000 if "absent" in flaws else parent.pk,
             "operation": "post_entry:v1", "now": now, "error": ParentUnavailable()}

    # Python: SQLite's guard, through the ORM.
    in_python = engines_sqlite.question_open(**asked).holds()
    # SQL: PostgreSQL's guard, the expression its write folds in.
    guard = engines_postgresql.question_open(**asked)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {guard.sql}", guard.params)
        in_sql = cursor.fetchone()[0]

    assert in_sql == in_python
    assert in_python == (not flaws)
