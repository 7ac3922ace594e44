"""What the idempotency engine's statements share on every engine: the tables, the
columns a claim writes and a replay reads, the rows read back as models. The statements
themselves are in receipts/sql/, one module per engine, chosen in one place."""

import json
from datetime import datetime

from django.db import connection

from receipts.exceptions import ReceiptError, RequestDeleted, RequestExpired
from receipts.models import Attempt, Receipt, Tombstone
from receipts.purge import _read_moment as read_moment

RECEIPTS = Receipt._meta.db_table
ATTEMPTS = Attempt._meta.db_table
TOMBSTONES = Tombstone._meta.db_table

# What a claim writes, in the order of its parameters (receipts.services._claim_row).
CLAIM_FIELDS = tuple(
    Receipt._meta.get_field(name)
    for name in (
        "scope", "operation", "request_id", "digests", "state", "first_route", "attempts",
        "first_seen_at", "last_seen_at", "receipt_expires_at",
    )
)

RECEIPT_COLUMNS = (
    "id", "state", "digests", "result_id", "first_route", "attempts", "first_seen_at",
    "last_seen_at", "receipt_expires_at", "deleted_at",
)


def receipt_from_row(identity, row) -> Receipt:
    values = dict(zip(RECEIPT_COLUMNS, row, strict=False))
    if isinstance(values["digests"], str):
        values["digests"] = json.loads(values["digests"])
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


# `EXISTS (...)`: whether an identity has a committed receipt, as SQL a caller folds into
# a statement of its own (the board's admission does). Its parameters: the scope (where
# `{scope}` is, an SQL expression for a statement that learns the caller itself), the
# operation, the request id (as the field prepares it: `request_id_param`).
RECEIPT_SEEN_SQL = (
    f"EXISTS (SELECT 1 FROM {RECEIPTS} WHERE scope = {{scope}} AND operation = %s "
    f"AND request_id = %s)"
)


def request_id_param(request_id):
    return uuid_field(Receipt, "request_id", request_id)


def uuid_param(model, name, value):
    return uuid_field(model, name, value)


def outcome_detail(outcome: str) -> str:
    """The attempt log's `detail` of an outcome: empty for a success, else its code.
    The same rule as receipts.services.attempt_detail and, in SQL, the replay's
    (the function receipts_replay); tests/receipts/test_rules.py compares them."""
    return "" if outcome in ("replayed", "created") else str(outcome)[:32]


def log_attempt(cursor, identity, receipt_id, route, outcome, now) -> None:
    cursor.execute(
        f"INSERT INTO {ATTEMPTS} (identity, receipt_id, route, outcome, detail, created_at) "
        f"VALUES (%s, %s, %s, %s, %s, %s)",
        [uuid_field(Attempt, "identity", identity.key), receipt_id, route, str(outcome),
         outcome_detail(outcome), moment(now)],
    )


def load(cursor, model, pk):
    """One row as a model instance, converting what SQLite returns as text or integers."""
    fields = model._meta.concrete_fields
    cursor.execute(
        f"SELECT {', '.join(f.column for f in fields)} FROM {model._meta.db_table} "
        f"WHERE {model._meta.pk.column} = %s",
        [pk],
    )
    row = cursor.fetchone()
    if row is None:
        return None
    values = []
    for field, value in zip(fields, row, strict=True):
        kind = field.get_internal_type()
        if value is not None and kind == "BooleanField":
            value = bool(value)
        elif value is not None and kind == "DateTimeField":
            value = read_moment(value)
        values.append(value)
    return model.from_db(connection.alias, [f.attname for f in fields], values)


def adapted(values) -> list:
    # An effect's values are plain Python values; only moments need the engine's form.
    # (The fields' get_db_prep_save, one call each, cost more than the statement.)
    adapt = connection.ops.adapt_datetimefield_value
    return [adapt(value) if isinstance(value, datetime) else value for value in values]


def uuid_field(model, name, value):
    return model._meta.get_field(name).get_db_prep_value(value, connection)


def moment(value):
    return connection.ops.adapt_datetimefield_value(value)
