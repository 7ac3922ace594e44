"""Maintenance's statements kept in `.sql` files write their table and column names out:
a statement that writes whole rows names every column of the row's model, so a field
added later fails here until each statement says what it writes into it."""

import re

from django.apps import apps
from django.utils import timezone

from maintenance.deliveries import outbox
from maintenance.deliveries.models import Delivery
from receipts.function_file import ROOT, code_of

INSERT = re.compile(r"INSERT INTO (\w+) \(([^)]*)\)", re.IGNORECASE)
# The columns a new delivery leaves empty: the sender and the sweep fill them.
LEFT_EMPTY_BY_THE_OUTBOX = {"current_attempt", "lease_expires_at", "settled_at"}


def columns_of(model) -> list[str]:
    return sorted(field.column for field in model._meta.concrete_fields)


def inserts() -> list[tuple[str, str, list[str]]]:
    """Every INSERT of maintenance's statement files: the file, the table, the columns."""
    found = []
    for path in sorted((ROOT / "maintenance").rglob("*.sql")):
        for table, columns in INSERT.findall(code_of(path.read_text(encoding="utf-8"))):
            names = [column.strip() for column in columns.split(",")]
            found.append((str(path.relative_to(ROOT)), table, names))
    return found


def test_a_statement_that_writes_rows_names_every_column_of_its_model():
    models = {model._meta.db_table: model for model in apps.get_models()}
    written = inserts()

    assert {table for _, table, _ in written} == {"receipts_tombstone"}
    for path, table, columns in written:
        assert sorted(columns) == columns_of(models[table]), path


def test_the_outbox_names_every_column_of_a_delivery_but_those_a_new_one_leaves_empty():
    companion = outbox.outbox_companion(None, now=timezone.now())

    named = {*companion.columns, companion.link}

    assert not named & LEFT_EMPTY_BY_THE_OUTBOX
    assert sorted(named | LEFT_EMPTY_BY_THE_OUTBOX) == columns_of(Delivery)


def test_the_delivery_purge_selects_the_final_states_of_a_delivery():
    for engine in ("postgresql", "sqlite"):
        path = ROOT / f"maintenance/deliveries/sql/{engine}/settled_oldest.sql"

        (states,) = re.findall(r"state IN \(([^)]*)\)", code_of(path.read_text()))

        assert sorted(state.strip(" '") for state in states.split(",")) == sorted(
            state.value for state in Delivery.FINAL
        ), path
