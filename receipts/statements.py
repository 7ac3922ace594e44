"""What the idempotency engine's two engines share (receipts/engines/): the receipts'
table, the columns a replay reads, the tombstone read's file, the rows read back as
models, and how a tombstone and an outcome are told."""

import functools
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from django.db import connection
from django.db.models import Field, Model

from receipts.exceptions import ReceiptError, RequestDeleted, RequestExpired
from receipts.models import Receipt, Tombstone

RECEIPTS = Receipt._meta.db_table

# An identity's tombstone in force (the file says how both engines' writes read it);
# the ORM's form of the same rule is receipts.services.tombstones_in_force.
TOMBSTONE_IN_FORCE_SQL = "receipts/sql/tombstone_in_force.sql"

# What a replay reads of a receipt, in this order (receipt_from_row): the columns the
# replay statement of each engine returns (receipts/sql/<engine>/replay.sql).
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
    for name in ("first_seen_at", "receipt_expires_at"):
        values[name] = read_moment(values[name])
    for name in ("last_seen_at", "deleted_at"):
        if values[name] is not None:
            values[name] = read_moment(values[name])
    return Receipt(
        scope=identity.scope, operation=identity.operation, request_id=identity.request_id,
        **values,
    )


def tombstone_error(reason: int) -> ReceiptError:
    if reason == Tombstone.Reason.DELETED:
        return RequestDeleted()
    return RequestExpired()


def outcome_detail(outcome: str) -> str:
    """The attempt log's `detail` of an outcome: empty for a success, else its code cut
    to the column. The one rule in Python (receipts.services.attempt_detail applies it to
    an error); written again in SQL by the function receipts_replay, and
    tests/receipts/test_rules.py compares the two."""
    return "" if outcome in ("replayed", "created") else str(outcome)[:32]


# Field types whose Python value both engines' drivers take and return as it is; a moment
# takes the engine's form by the fast path; any other type goes through the field's own
# get_db_prep_save and is read back through Django's converters (`effect_from_row`), so a
# field added to an effect's model is written and read as the ORM would, never raw.
_AS_IS = frozenset({
    "AutoField", "BigAutoField", "BigIntegerField", "CharField", "IntegerField",
    "PositiveIntegerField", "PositiveSmallIntegerField", "SmallIntegerField", "TextField",
    "BooleanField",
})


def effect_params(model: type[Model], values: Mapping[str, object]) -> list:
    """An effect's values as the engine's statement takes them, in `values`' order."""
    return [
        value if value is None or write is None else write(value)
        for write, value in zip(_writers(model, tuple(values)), values.values(), strict=True)
    ]


def effect_from_row(model: type[Model], row: Sequence) -> Model:
    """A row of every concrete column of `model`, as the ORM would have read it."""
    values = []
    for (column, converters), value in zip(_readers(model, connection.vendor), row, strict=True):
        for convert in converters:
            value = convert(value, column, connection)
        values.append(value)
    return model.from_db(connection.alias, [f.attname for f in model._meta.concrete_fields], values)


@functools.cache
def _writers(model: type[Model], names: tuple[str, ...]) -> tuple:
    # Asked once per model and set of fields: a field's get_db_prep_save for every
    # post's every value costs more than the statement (`effect_params`' fast paths).
    return tuple(_writer(model._meta.get_field(name)) for name in names)


def _writer(field: Field):
    stored = field.target_field if field.is_relation else field
    kind = stored.get_internal_type()
    if kind in _AS_IS:
        return None
    if kind == "DateTimeField":
        return lambda value: connection.ops.adapt_datetimefield_value(value)
    return lambda value: field.get_db_prep_save(value, connection)


@functools.cache
def _readers(model: type[Model], vendor: str) -> tuple:
    # Django's own converters for each column (SQLite's text moments, its 0/1 booleans,
    # a JSON column on either engine), asked once per model and engine.
    table = model._meta.db_table
    out = []
    for field in model._meta.concrete_fields:
        column = field.get_col(table)
        out.append((column, tuple(
            connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        )))
    return tuple(out)


def read_moment(value) -> datetime:
    # PostgreSQL returns aware datetimes; SQLite returns UTC text (or naive) to raw SQL.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)
