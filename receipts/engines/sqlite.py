"""The idempotency engine on SQLite, chosen in receipts/engines/__init__.py.

Nothing here locks or claims: every transaction is `BEGIN IMMEDIATE` (the database's
`transaction_mode`, board/settings.py), so it holds SQLite's one write lock from its
first statement, and SQLite's busy timeout bounds the wait for it. The rules are
receipts/services.py's; what the caller adds is a guard, Python called in the write's
transaction, and its companions' rows, statements it hands over as data and the engine
runs after the effect's (`_companions_write`), so nothing of another app runs while the
write holds the lock.

The engine's own rows are written and read with statements, not the ORM: a write holds
SQLite's one write lock from its first statement to its commit, so every microsecond of
Python inside it is a microsecond no other post can write. Measured over HTTP (`make
bench`, 2 gunicorn workers, one run each, docs/benchmarks.md): with this engine in the
ORM a new post cost the machine 6.1 ms and a replay 6.6 ms, 0.18 and 0.16 of the plain
insert, under the 0.25 floor an embedded default needs; with these statements (and the
admission's receipt look a statement too) 3.4 and 2.4 ms, 0.27 and 0.40.
"""

import functools

from django.db import DatabaseError, connection, transaction

from receipts.faults import Fault
from receipts.function_file import statement_file
from receipts.models import tombstone_today
from receipts.statements import (
    TOMBSTONE_IN_FORCE_SQL,
    effect_from_row,
    effect_params,
    outcome_detail,
    receipt_from_row,
)

# The statements, and why each is written so, are .sql files in receipts/sql/sqlite/,
# read once a process; what varies by call is a parameter, and what only the effect's
# model can say (its table and columns) a named slot, filled in once a model.
CLAIM_SQL = "receipts/sql/sqlite/claim.sql"
EFFECT_SQL = "receipts/sql/sqlite/effect.sql"
COMPANION_SQL = "receipts/sql/sqlite/companion.sql"
REPLAY_SQL = "receipts/sql/sqlite/replay.sql"
ATTEMPT_SQL = "receipts/sql/sqlite/attempt.sql"
EFFECT_READ_SQL = "receipts/sql/sqlite/effect_read.sql"


def write(receipt, identity, effect, route, now, unrefused, guard):
    """The claim and the write in one immediate transaction, a statement at a time
    (SQLite runs them in-process: a statement costs no round trip). The same answers as
    PostgreSQL's one round trip (receipts/engines/postgresql.py `write`): None for a lost
    claim; else the receipt, the new row (None when refused), the tombstone's reason and
    the rows each companion wrote. A refused write is rolled back."""
    # SQLite keeps a UUID as its 32 hex digits (Django's UUIDField without a native type).
    moment = connection.ops.adapt_datetimefield_value  # as Django writes a datetime
    key, at = identity.key.hex, moment(now)
    committing = False
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement_file(CLAIM_SQL), {
                "scope": receipt.scope, "operation": receipt.operation,
                "request_id": receipt.request_id.hex,
                "packed_digests": receipt.packed_digests, "state": str(receipt.state),
                "first_route": receipt.first_route, "attempts": receipt.attempts,
                "first_seen_at": at,
                "receipt_expires_at": moment(receipt.receipt_expires_at),
                "effect_table": effect.model._meta.db_table,
            })
            claimed = cursor.fetchone()
            if claimed is None:
                return None
            receipt.id = receipt.result_id = claimed[0]
            cursor.execute(statement_file(TOMBSTONE_IN_FORCE_SQL), [key, str(tombstone_today(now))])
            tomb = cursor.fetchone()
            if guard is not None and tomb is None and unrefused:
                unrefused = guard.holds()
            if tomb is not None or not unrefused:
                raise _Refused(None if tomb is None else tomb[0])
            result = _effect_create(cursor, receipt, effect)
            returned = _companions_write(cursor, effect.companions, result.pk)
            committing = True  # what fails from here on is COMMIT
    except _Refused as refused:
        return receipt, None, refused.args[0], []
    except DatabaseError as error:
        raise Fault(error, on_identity=False, committing=committing) from None
    return receipt, result, None, returned


class _Refused(Exception):
    """The write is refused after its claim: leave its transaction, rolled back."""


def _effect_create(cursor, receipt, effect):
    """The effect's row, with the id the claim reserved: the receipt's own."""
    model = effect.model
    cursor.execute(
        _effect_sql(model, tuple(effect.values)),
        [receipt.pk, *effect_params(model, effect.values)],
    )
    made = cursor.fetchone()[0]
    return model(pk=made, **effect.values)


@functools.cache
def _effect_sql(model, names: tuple[str, ...]) -> str:
    """effect.sql for `model`'s table and the columns of `names`, filled in once each."""
    meta = model._meta
    return statement_file(EFFECT_SQL).format(
        effect_table=meta.db_table,
        effect_pk=meta.pk.column,
        effect_columns=", ".join(meta.get_field(name).column for name in names),
        effect_values=", ".join(["%s"] * len(names)),
    )


def _companions_write(cursor, companions, made) -> list[list]:
    """Each companion's rows, linked to the effect's new id `made`, in one INSERT ... SELECT
    a companion (PostgreSQL's `write` runs the same one inside its statement); the
    `returning` column of the rows each wrote."""
    returned = []
    for companion in companions:
        cursor.execute(_companion_sql(companion.shape), [made, *companion.params])
        returned.append([row[0] for row in cursor.fetchall()])
    return returned


@functools.cache
def _companion_sql(shape: tuple) -> str:
    """companion.sql for one companion's shape, filled in once each."""
    table, columns, link, rows_sql, returning = shape
    return statement_file(COMPANION_SQL).format(
        table=table, columns=", ".join(columns), link=link, rows_sql=rows_sql,
        returning=returning,
    )


def replay(identity, asked, route, now, model, judge):
    """The receipt counted and its attempt logged, in one immediate transaction that
    takes the write lock first, so nobody changes the receipt or the effect between
    this read and the answer; with `judge`'s verdict, the word the attempt log keeps; None
    when the receipt is gone (purged)."""
    at = connection.ops.adapt_datetimefield_value(now)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement_file(REPLAY_SQL), {
            "now": at, "scope": identity.scope, "operation": identity.operation,
            "request_id": identity.request_id.hex,
        })
        row = cursor.fetchone()
        if row is None:
            return None
        receipt = receipt_from_row(identity, row)
        outcome = judge(receipt)
        cursor.execute(statement_file(ATTEMPT_SQL), {
            "identity": identity.key.hex, "receipt_id": receipt.pk, "route": route,
            "outcome": str(outcome), "detail": outcome_detail(outcome), "created_at": at,
        })
        result = None
        if model is not None and receipt.result_id is not None:
            result = _load(cursor, model, receipt.result_id)
        return receipt, result, outcome


def _load(cursor, model, pk):
    """One row as the ORM would have read it."""
    cursor.execute(_effect_read_sql(model), [pk])
    row = cursor.fetchone()
    return None if row is None else effect_from_row(model, row)


@functools.cache
def _effect_read_sql(model) -> str:
    """effect_read.sql for `model`'s table and every concrete column, filled in once a
    model."""
    meta = model._meta
    return statement_file(EFFECT_READ_SQL).format(
        effect_columns=", ".join(f.column for f in meta.concrete_fields),
        effect_table=meta.db_table,
        effect_pk=meta.pk.column,
    )
