"""The idempotency engine's statements on SQLite, chosen in receipts/sql/__init__.py.

SQLite runs each statement in-process, so round trips cost little; the ORM's
building of statements and instances did (a replay made 5,800 Python calls through
the ORM, against 1,150 for the whole no-database ceiling request). Its immediate
transaction already serializes everything.
"""

import functools
from datetime import UTC, datetime

from django.db import DatabaseError, connection, transaction

from receipts.faults import Fault
from receipts.models import Attempt, Receipt
from receipts.statements import (
    ATTEMPTS,
    CLAIM_FIELDS,
    RECEIPT_COLUMNS,
    RECEIPTS,
    TOMBSTONES,
    load,
    log_attempt,
    moment,
    receipt_from_row,
    uuid_param,
)


@functools.cache
def claim_sql(model) -> str:
    """The claim: the receipt INSERTed with `ON CONFLICT DO NOTHING`. The immediate
    transaction and SQLite's busy timeout bound its wait; the effect's id is set on the
    receipt after the effect's INSERT (`write`)."""
    columns = ", ".join(f.column for f in CLAIM_FIELDS)
    return (
        f"INSERT INTO {RECEIPTS} ({columns}) VALUES ({', '.join(['%s'] * len(CLAIM_FIELDS))}) "
        f"ON CONFLICT (scope, operation, request_id) DO NOTHING RETURNING id, result_id"
    )



def replay(identity, digests, route, now, model, judge):
    # The write lock first (BEGIN IMMEDIATE), then read: nobody changes the receipt or
    # the effect between this read and the answer.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {RECEIPTS} SET attempts = attempts + 1, last_seen_at = %s "
            f"WHERE scope = %s AND operation = %s AND request_id = %s "
            f"RETURNING {', '.join(RECEIPT_COLUMNS)}",
            [moment(now), identity.scope, identity.operation,
             uuid_param(Receipt, "request_id", identity.request_id)],
        )
        row = cursor.fetchone()
        if row is None:
            return None
        receipt = receipt_from_row(identity, row)
        verdict = judge(receipt)
        outcome = "replayed" if verdict is None else verdict.code
        log_attempt(cursor, identity, receipt.pk, route, outcome, now)
        result = None
        if model is not None and receipt.result_id is not None:
            result = load(cursor, model, receipt.result_id)
        return receipt, result

class _Refused(Exception):
    """The write is refused after its claim: leave its transaction, rolled back."""


def write(claim, identity, effect, route, now, unrefused, guard):
    """The claim and the write in one immediate transaction, a statement at a time
    (SQLite runs them in-process: a statement costs no round trip). The same answers as
    PostgreSQL's one round trip (receipts/sql/postgresql.py `write`): None for a lost
    claim; else the receipt, the new row (None when refused), the tombstone's reason and
    the companions' returned values. A refused write is rolled back."""
    receipt, claim_params = claim
    # SQLite keeps a UUID as its 32 hex digits (Django's UUIDField without a native type).
    key, at = identity.key.hex, connection.ops.adapt_datetimefield_value(now)
    committing = False
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(claim_sql(effect.model), claim_params)
            claimed = cursor.fetchone()
            if claimed is None:
                return None
            receipt.id, receipt.result_id = claimed
            cursor.execute(
                f"SELECT reason FROM {TOMBSTONES} WHERE key = %s AND expires_at > %s",
                [key, str(now.astimezone(UTC).date())],
            )
            tomb = cursor.fetchone()
            if guard is not None and tomb is None and unrefused:
                cursor.execute(f"SELECT {guard.sql}", list(guard.params))
                unrefused = bool(cursor.fetchone()[0])
            if tomb is not None or not unrefused:
                raise _Refused(None if tomb is None else tomb[0])
            result = _effect_create(cursor, receipt, effect)
            cursor.execute(
                f"INSERT INTO {ATTEMPTS} (identity, receipt_id, route, outcome, detail, "
                f"created_at) VALUES (%s, %s, %s, %s, '', %s)",
                [key, receipt.pk, route, Attempt.Outcome.CREATED.value, at],
            )
            returned = []
            for companion in effect.companions:
                cursor.execute(
                    f"INSERT INTO {companion.table} ({', '.join(companion.columns)}, "
                    f"{companion.link}) SELECT companion.*, %s "
                    f"FROM ({companion.rows_sql}) AS companion "
                    f"RETURNING {companion.returning}",
                    [result.pk, *companion.params],
                )
                returned.append([row[0] for row in cursor.fetchall()])
            committing = True  # what fails from here on is COMMIT
    except _Refused as refused:
        return receipt, None, refused.args[0], []
    except DatabaseError as error:
        raise Fault(error, on_identity=False, committing=committing) from None
    return receipt, result, None, returned


def _effect_create(cursor, receipt, effect):
    """The effect's row, and the receipt's `result_id` set to it."""
    model = effect.model
    columns, values = [], []
    adapt = connection.ops.adapt_datetimefield_value
    for name, value in effect.values.items():
        columns.append(model._meta.get_field(name).column)
        values.append(adapt(value) if isinstance(value, datetime) else value)
    cursor.execute(
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) "
        f"VALUES ({', '.join(['%s'] * len(values))}) RETURNING {model._meta.pk.column}",
        values,
    )
    made = cursor.fetchone()[0]
    cursor.execute(f"UPDATE {RECEIPTS} SET result_id = %s WHERE id = %s", [made, receipt.pk])
    receipt.result_id = made
    return model(pk=made, **effect.values)
