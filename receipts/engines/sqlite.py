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
from receipts.models import tombstone_today
from receipts.statements import (
    ATTEMPTS,
    CLAIM_FIELDS,
    RECEIPT_COLUMNS,
    RECEIPTS,
    TOMBSTONE_IN_FORCE_SQL,
    effect_from_row,
    effect_params,
    outcome_detail,
    receipt_from_row,
)

# The claim: the receipt INSERTed with `ON CONFLICT DO NOTHING`; the effect's id is set
# on it after the effect's INSERT.
_CLAIM_SQL = (
    f"INSERT INTO {RECEIPTS} ({', '.join(f.column for f in CLAIM_FIELDS)}) "
    f"VALUES ({', '.join(['%s'] * len(CLAIM_FIELDS))}) "
    f"ON CONFLICT (request_id, scope, operation) DO NOTHING RETURNING id"
)


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
            cursor.execute(_CLAIM_SQL, [
                receipt.scope, receipt.operation, receipt.request_id.hex,
                receipt.packed_digests, str(receipt.state), receipt.first_route,
                receipt.attempts, at, at, moment(receipt.receipt_expires_at),
            ])
            claimed = cursor.fetchone()
            if claimed is None:
                return None
            receipt.id = claimed[0]
            cursor.execute(TOMBSTONE_IN_FORCE_SQL, [key, str(tombstone_today(now))])
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
    """The effect's row, and the receipt's `result_id` set to it."""
    model = effect.model
    columns = [model._meta.get_field(name).column for name in effect.values]
    values = effect_params(model, effect.values)
    cursor.execute(
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) "
        f"VALUES ({', '.join(['%s'] * len(values))}) RETURNING {model._meta.pk.column}",
        values,
    )
    made = cursor.fetchone()[0]
    cursor.execute(f"UPDATE {RECEIPTS} SET result_id = %s WHERE id = %s", [made, receipt.pk])
    receipt.result_id = made
    return model(pk=made, **effect.values)


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
    table, columns, link, rows_sql, returning = shape
    return (
        f"INSERT INTO {table} ({', '.join(columns)}, {link}) "
        f"SELECT companion.*, %s FROM ({rows_sql}) AS companion RETURNING {returning}"
    )


def replay(identity, asked, route, now, model, judge):
    """The receipt counted and its attempt logged, in one immediate transaction that
    takes the write lock first, so nobody changes the receipt or the effect between
    this read and the answer; with `judge`'s verdict, the word the attempt log keeps; None
    when the receipt is gone (purged)."""
    at = connection.ops.adapt_datetimefield_value(now)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {RECEIPTS} SET attempts = attempts + 1, last_seen_at = %s "
            f"WHERE scope = %s AND operation = %s AND request_id = %s "
            f"RETURNING {', '.join(RECEIPT_COLUMNS)}",
            [at, identity.scope, identity.operation, identity.request_id.hex],
        )
        row = cursor.fetchone()
        if row is None:
            return None
        receipt = receipt_from_row(identity, row)
        outcome = judge(receipt)
        cursor.execute(
            f"INSERT INTO {ATTEMPTS} (identity, receipt_id, route, outcome, detail, "
            f"created_at) VALUES (%s, %s, %s, %s, %s, %s)",
            [identity.key.hex, receipt.pk, route, str(outcome), outcome_detail(outcome), at],
        )
        result = None
        if model is not None and receipt.result_id is not None:
            result = _load(cursor, model, receipt.result_id)
        return receipt, result, outcome


def _load(cursor, model, pk):
    """One row as the ORM would have read it."""
    cursor.execute(
        f"SELECT {', '.join(f.column for f in model._meta.concrete_fields)} "
        f"FROM {model._meta.db_table} WHERE {model._meta.pk.column} = %s",
        [pk],
    )
    row = cursor.fetchone()
    return None if row is None else effect_from_row(model, row)
