"""The engine's statements kept in `.sql` files (receipts/sql/<engine>/) name a
receipt's and an attempt's columns literally: a field added to either fails here until
every statement that writes or reads its row names it, on both engines, or says why it
leaves it out."""

import re

from receipts.engines import postgresql, sqlite
from receipts.function_file import code_of, statement_file
from receipts.models import Attempt, Receipt
from receipts.statements import RECEIPT_COLUMNS

# Columns a claim leaves to their NULL: digests are the JSON form of receipts made before
# the packed one, last_seen_at is set by a retry, deleted_at by a delete.
NOT_CLAIMED = {"digests", "last_seen_at", "deleted_at"}
# The two columns a claim writes with the id it reserves for the effect, last.
RESERVED = ["result_id", "id"]
# Columns a replay knows already: they are its identity.
IDENTITY = {"scope", "operation", "request_id"}


def receipt_columns() -> set[str]:
    return {field.column for field in Receipt._meta.concrete_fields}


def inserted(path: str, table: str) -> list[str]:
    code = code_of(statement_file(path))
    return names(re.search(rf"INSERT INTO {table} \((.*?)\)", code, re.DOTALL).group(1))


def names(listed: str) -> list[str]:
    return [name.strip() for name in listed.split(",")]


def test_the_claim_names_every_column_of_a_receipt_it_writes_on_both_engines():
    code = code_of(statement_file(postgresql.CLAIM_SQL))
    listed = re.search(r"INSERT INTO receipts_receipt \((.*?)\)", code, re.DOTALL).group(1)

    assert set(names(listed)) == receipt_columns() - NOT_CLAIMED
    assert set(inserted(sqlite.CLAIM_SQL, "receipts_receipt")) == receipt_columns() - NOT_CLAIMED


def test_sqlites_claim_has_a_parameter_named_for_each_column_it_writes_but_the_reserved_id():
    parameters = re.findall(r"%\((\w+)\)s", code_of(statement_file(sqlite.CLAIM_SQL)))
    columns = inserted(sqlite.CLAIM_SQL, "receipts_receipt")

    assert columns[-2:] == RESERVED
    assert parameters == [*columns[:-2], "effect_table"]


def test_sqlites_attempt_log_names_every_column_of_an_attempt_but_its_id():
    columns = inserted(sqlite.ATTEMPT_SQL, "receipts_attempt")
    parameters = re.findall(r"%\((\w+)\)s", code_of(statement_file(sqlite.ATTEMPT_SQL)))

    assert set(columns) == {f.column for f in Attempt._meta.concrete_fields} - {"id"}
    assert parameters == columns


def test_the_claim_has_a_parameter_for_each_column_it_writes_but_the_reserved_id():
    code = code_of(statement_file(postgresql.CLAIM_SQL))
    listed = names(re.search(r"INSERT INTO receipts_receipt \((.*?)\)", code, re.DOTALL).group(1))
    parameters = re.findall(r"%\((\w+)\)s", code)

    assert listed[-2:] == RESERVED
    assert parameters == [*listed[:-2], "lock_timeout", "effect_table", "effect_pk"]


def test_the_replay_reads_every_column_of_a_receipt_but_its_identity():
    code = code_of(statement_file(postgresql.REPLAY_SQL))
    read = re.findall(r"hit\.(\w+)", code.split("FROM receipts_replay")[0])

    assert read == [*RECEIPT_COLUMNS, "outcome"]
    assert set(RECEIPT_COLUMNS) == receipt_columns() - IDENTITY


def test_sqlites_replay_returns_every_column_of_a_receipt_but_its_identity():
    code = code_of(statement_file(sqlite.REPLAY_SQL))

    assert names(code.split("RETURNING")[1]) == list(RECEIPT_COLUMNS)
