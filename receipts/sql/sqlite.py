"""The idempotency engine's statements on SQLite, chosen in receipts/sql/__init__.py.

SQLite runs each statement in-process, so round trips cost little; the ORM's
building of statements and instances did (a replay made 5,800 Python calls through
the ORM, against 1,150 for the whole no-database ceiling request). Its immediate
transaction already serializes everything.
"""

import functools
from datetime import UTC

from django.db import DatabaseError, connection, transaction

from receipts.faults import Fault
from receipts.models import Attempt, Receipt, Tombstone
from receipts.statements import (
    CLAIM_FIELDS,
    RECEIPT_COLUMNS,
    RECEIPTS,
    TOMBSTONES,
    adapted,
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
    receipt after the effect's INSERT (`create_effect`)."""
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
                [uuid_param(Tombstone, "key", identity.key), str(now.astimezone(UTC).date())],
            )
            tomb = cursor.fetchone()
            if tomb is not None or not unrefused or not _guard_holds(cursor, guard):
                raise _Refused(None if tomb is None else tomb[0])
            result, returned = _create_effect(cursor, identity, receipt, effect, route, now)
            committing = True  # what fails from here on is COMMIT
    except _Refused as refused:
        return receipt, None, refused.args[0], []
    except DatabaseError as error:
        raise Fault(error, on_identity=False, committing=committing) from None
    return receipt, result, None, returned


def _guard_holds(cursor, guard) -> bool:
    if guard is None:
        return True
    cursor.execute(f"SELECT {guard.sql}", list(guard.params))
    return bool(cursor.fetchone()[0])


def _create_effect(cursor, identity, receipt, effect, route, now):
    model = effect.model
    fields = [model._meta.get_field(name) for name in effect.values]
    values = adapted(effect.values[f.attname] for f in fields)
    cursor.execute(
        f"INSERT INTO {model._meta.db_table} ({', '.join(f.column for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(values))}) RETURNING {model._meta.pk.column}",
        values,
    )
    made = cursor.fetchone()[0]
    cursor.execute(f"UPDATE {RECEIPTS} SET result_id = %s WHERE id = %s", [made, receipt.pk])
    receipt.result_id = made
    log_attempt(cursor, identity, receipt.pk, route, Attempt.Outcome.CREATED, now)
    returned = []
    for companion in effect.companions:
        cursor.execute(
            f"INSERT INTO {companion.table} ({', '.join(companion.columns)}, "
            f"{companion.link}) SELECT companion.*, %s "
            f"FROM ({companion.rows_sql}) AS companion "
            f"RETURNING {companion.returning}",
            [made, *companion.params],
        )
        returned.append([row[0] for row in cursor.fetchall()])
    return model(pk=made, **effect.values), returned
