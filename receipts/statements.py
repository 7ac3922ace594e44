"""What the idempotency engine's two engines share (receipts/engines/): the tables, the
columns a claim writes and a replay reads, the rows read back as models, and how a
tombstone and an outcome are told."""

import json
from datetime import UTC, datetime

from django.db import connection

from receipts.exceptions import ReceiptError, RequestDeleted, RequestExpired
from receipts.models import Attempt, Receipt, Tombstone

RECEIPTS = Receipt._meta.db_table
ATTEMPTS = Attempt._meta.db_table

# What a claim writes, in the order of its parameters (engines/postgresql.py `_claim_params`).
CLAIM_FIELDS = tuple(
    Receipt._meta.get_field(name)
    for name in (
        "scope", "operation", "request_id", "packed_digests", "state", "first_route", "attempts",
        "first_seen_at", "last_seen_at", "receipt_expires_at",
    )
)

RECEIPT_COLUMNS = (
    "id", "state", "digests", "packed_digests", "result_id", "first_route", "attempts",
    "first_seen_at", "last_seen_at", "receipt_expires_at", "deleted_at",
)


def receipt_from_row(identity, row) -> Receipt:
    values = dict(zip(RECEIPT_COLUMNS, row, strict=False))
    if isinstance(values["digests"], str):
        values["digests"] = json.loads(values["digests"])
    if values["packed_digests"] is not None:
        values["packed_digests"] = bytes(values["packed_digests"])
    for name in ("first_seen_at", "last_seen_at", "receipt_expires_at"):
        values[name] = read_moment(values[name])
    if values["deleted_at"] is not None:
        values["deleted_at"] = read_moment(values["deleted_at"])
    return Receipt(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id,
        **values,
    )


def tombstone_error(reason: int) -> ReceiptError:
    if reason == Tombstone.Reason.DELETED:
        return RequestDeleted()
    return RequestExpired()


def outcome_detail(outcome: str) -> str:
    """The attempt log's `detail` of an outcome: empty for a success, else its code.
    The same rule as receipts.services.attempt_detail and, in SQL, the replay's
    (the function receipts_replay); tests/receipts/test_rules.py compares them."""
    return "" if outcome in ("replayed", "created") else str(outcome)[:32]


def adapted(values) -> list:
    # An effect's values are plain Python values; only moments need the engine's form.
    # (The fields' get_db_prep_save, one call each, cost more than the statement.)
    adapt = connection.ops.adapt_datetimefield_value
    return [adapt(value) if isinstance(value, datetime) else value for value in values]


def read_moment(value) -> datetime:
    # PostgreSQL returns aware datetimes; SQLite returns UTC text (or naive) to raw SQL.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)
