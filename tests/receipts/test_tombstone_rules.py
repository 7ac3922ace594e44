"""A tombstone's two rules, written twice: in Python (receipts.fingerprint.Identity.key,
receipts.models.tombstone_expiry_day, maintenance.tombstones.purge.ReceiptRow.tombstone) and in SQL,
where PostgreSQL's purge makes the tombstones from the rows it deletes
(maintenance/tombstones/sql/postgresql/entomb.sql). Compared on generated input: each rule
alone on PostgreSQL, and the whole purge of a receipt (receipts_entomb) on both engines."""

from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maintenance.tombstones.purge import ReceiptRow, receipts_entomb, receipts_lock
from receipts.fingerprint import Identity
from receipts.models import Receipt, Tombstone, tombstone_expiry_day

pytestmark = pytest.mark.django_db

quick = settings(max_examples=80, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])

# Any text a database can hold: no surrogates, no NUL (PostgreSQL's text refuses it).
text = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
scopes = st.text(text, max_size=64)
operations = st.text(text, max_size=32)

offsets = st.sampled_from([
    UTC,
    timezone(timedelta(hours=14)),
    timezone(timedelta(hours=-12)),
    timezone(timedelta(hours=5, minutes=30)),
    timezone(timedelta(hours=-3, minutes=-30)),
    ZoneInfo("Europe/Berlin"),
    ZoneInfo("America/New_York"),
])
# Moments at, just before and just after a midnight UTC, and anywhere in the day around
# one, each written in some offset: the rounding's edges.
near_midnight = st.builds(
    lambda day, micros, zone: (
        datetime.combine(day, time(), UTC) + timedelta(microseconds=micros)
    ).astimezone(zone),
    st.dates(min_value=date(2001, 1, 1), max_value=date(2090, 12, 31)),
    st.sampled_from([-1, 0, 1]) | st.integers(-86_400_000_000, 86_400_000_000),
    offsets,
)
retentions = st.sampled_from(
    [timedelta(0), timedelta(microseconds=1), timedelta(days=1), timedelta(days=30)]
) | st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=800))


def entombed(*, scope="anonymous", operation="post_entry:v1", request_id, expires,
             retention=timedelta(0)) -> list[Tombstone]:
    """The tombstones the purge leaves of one live receipt (and no others)."""
    Tombstone.objects.all().delete()
    receipt = Receipt.objects.create(
        scope=scope, operation=operation, request_id=request_id, digests={},
        state=Receipt.State.SUCCEEDED, first_route="api", first_seen_at=expires,
        last_seen_at=expires, receipt_expires_at=expires,
    )
    held = receipts_lock(ids=[receipt.pk], now=expires)
    receipts_entomb(receipts=held, tombstone_retention=retention, deletion_retention=retention)
    return list(Tombstone.objects.all())


@pytest.mark.postgres
@quick
@given(scope=scopes, operation=operations, request_id=st.uuids())
def test_the_identity_key_is_the_same_in_python_and_sql(scope, operation, request_id):
    made = entombed(
        scope=scope, operation=operation, request_id=request_id,
        expires=datetime(2030, 1, 1, tzinfo=UTC),
    )

    assert [tombstone.key for tombstone in made] == [Identity(scope, operation, request_id).key]


@pytest.mark.postgres
@quick
@given(end=near_midnight, retention=retentions, request_id=st.uuids())
def test_the_tombstone_day_is_the_same_in_python_and_sql(end, retention, request_id):
    # The expiry chosen so that expiry + retention lands on or near a midnight. In UTC,
    # as the purge reads it from the database: Python adds a duration to a datetime of a
    # zone with summer time on its wall clock (an hour off across the change).
    expiry = (end - retention).astimezone(UTC)

    made = entombed(request_id=request_id, expires=expiry, retention=retention)

    assert [tombstone.expires_at for tombstone in made] == [
        tombstone_expiry_day(expiry + retention)
    ]


@quick
@given(
    scope=scopes,
    operation=operations,
    request_id=st.uuids(),
    deleted=st.booleans(),
    end=near_midnight,
    deleted_at=st.none() | near_midnight,
    retention=retentions,
    deletion=retentions,
)
def test_a_purged_receipt_leaves_the_tombstone_the_python_rules_say(
    scope, operation, request_id, deleted, end, deleted_at, retention, deletion
):
    # given: a receipt whose tombstone day is decided on or near a midnight
    expires = end - retention
    receipt = Receipt.objects.create(
        scope=scope, operation=operation, request_id=request_id, digests={},
        state=Receipt.State.DELETED if deleted else Receipt.State.SUCCEEDED,
        first_route="api", first_seen_at=expires, last_seen_at=expires,
        receipt_expires_at=expires, deleted_at=deleted_at if deleted else None,
    )
    receipt.refresh_from_db()  # its moments as the purge reads them, in UTC
    expected = ReceiptRow(
        id=receipt.pk, scope=scope, operation=operation, request_id=request_id,
        state=receipt.state, result_id=None, expired=True,
        expires_raw=receipt.receipt_expires_at, deleted_raw=receipt.deleted_at,
    ).tombstone(tombstone_retention=retention, deletion_retention=deletion)

    # when: the purge replaces it (in SQL on PostgreSQL, in Python on SQLite)
    held = receipts_lock(ids=[receipt.pk], now=end)
    made = receipts_entomb(
        receipts=held, tombstone_retention=retention, deletion_retention=deletion
    )

    # then
    assert made == 1
    assert not Receipt.objects.filter(pk=receipt.pk).exists()
    tombstone = Tombstone.objects.get(key=expected.key)
    assert (tombstone.reason, tombstone.expires_at) == (expected.reason, expected.expires_at)
