"""The engine's statements kept in `.sql` files (receipts/sql/postgresql/) name a
receipt's columns literally, and SQLite's name them from receipts.statements: a field
added to the receipt fails here until every statement that writes or reads its row
names it, on both engines, or says why it leaves it out."""

import re

from receipts.engines import postgresql
from receipts.function_file import code_of, statement_file
from receipts.models import Receipt
from receipts.statements import CLAIM_FIELDS, RECEIPT_COLUMNS

# Columns a claim leaves to their NULL: the id comes from its own sequence, digests are
# the JSON form of receipts made before the packed one, deleted_at is set by a delete.
NOT_CLAIMED = {"id", "digests", "deleted_at"}
# Columns a replay knows already: they are its identity.
IDENTITY = {"scope", "operation", "request_id"}


def receipt_columns() -> set[str]:
    return {field.column for field in Receipt._meta.concrete_fields}


def names(listed: str) -> list[str]:
    return [name.strip() for name in listed.split(",")]


def test_the_claim_names_every_column_of_a_receipt_it_writes_on_both_engines():
    code = code_of(statement_file(postgresql.CLAIM_SQL))
    listed = re.search(r"INSERT INTO receipts_receipt \((.*?)\)", code, re.DOTALL).group(1)

    assert set(names(listed)) == receipt_columns() - NOT_CLAIMED
    # SQLite's claim writes CLAIM_FIELDS and sets result_id after the effect's INSERT.
    assert [f.column for f in CLAIM_FIELDS] + ["result_id"] == names(listed)


def test_the_claim_has_a_parameter_for_each_column_it_writes_but_the_reserved_id():
    code = code_of(statement_file(postgresql.CLAIM_SQL))
    listed = re.search(r"INSERT INTO receipts_receipt \((.*?)\)", code, re.DOTALL).group(1)
    parameters = re.findall(r"%\((\w+)\)s", code)

    assert parameters == [*names(listed)[:-1], "effect_table", "effect_pk", "lock_timeout"]


def test_the_replay_reads_every_column_of_a_receipt_but_its_identity():
    code = code_of(statement_file(postgresql.REPLAY_SQL))
    read = re.findall(r"hit\.(\w+)", code.split("FROM receipts_replay")[0])

    assert read == [*RECEIPT_COLUMNS, "outcome"]
    assert set(RECEIPT_COLUMNS) == receipt_columns() - IDENTITY
