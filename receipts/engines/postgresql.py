"""The idempotency engine's statements on PostgreSQL, chosen in receipts/engines/__init__.py.

The write path in as few statements as PostgreSQL allows (data-modifying CTEs).

Replaces, for a new post, the tombstone read, the entry's ORM INSERT, the receipt's
result_id UPDATE and the attempt's ORM INSERT (four round trips, three compiled by
the ORM each time) with one; for a replay, the receipt read, its UPDATE, the entry
read and the attempt INSERT, and the transaction around them, with one. Measured
(tests/bench/profile_post.py, cProfile, 300 posts on PostgreSQL): 7,540 Python calls
and 13 round trips a new post before, 2,840 and 6 after; the ORM's SQL compilation
(`as_sql`) was 12% of the profiled time before and is gone from this path.

The statements, and why each is written so, are .sql files in receipts/sql/postgresql/,
read once a process; what varies by call is a parameter.
"""

import functools
import json
from contextlib import nullcontext

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from receipts.faults import Fault, sqlstate
from receipts.function_file import statement_file
from receipts.models import Receipt, tombstone_today
from receipts.statements import (
    RECEIPT_COLUMNS,
    RECEIPTS,
    TOMBSTONE_IN_FORCE_SQL,
    effect_from_row,
    effect_params,
    receipt_from_row,
)


def commit_quietly() -> bool:
    """Whether a function that writes only bookkeeping may let its (auto)commit return
    without waiting for the WAL flush: its `commit_quietly` parameter (PostgreSQL; the
    functions `board_post_admit` and `receipts_replay` then turn synchronous_commit off
    for their own transaction with `set_config(..., true)`).

    For writes nothing depends on after a crash: a replay's bookkeeping (the attempt
    count, last_seen_at, the attempt log row) and the rate-limit counters. After a crash
    PostgreSQL comes back consistent, missing at most the last few hundred milliseconds
    of such writes. The counters need it although their table is unlogged: the admission
    also reads receipts, and a read that prunes a page logs the pruning, which made each
    counter commit wait for a flush.

    Measured over HTTP (2 gunicorn workers, PostgreSQL): during replays the backends
    flushed the WAL 0.62 times a request and a tenth of the machine sat idle waiting;
    with both statements quiet, replays gained a third (tests/bench/http_bench.py).
    Inside a caller's transaction, no: that commit is the caller's to make. (The board's
    admission passes `board_post_admit` the same condition, read in its own engine.)
    """
    return not connection.in_atomic_block


def wait_bound_ms() -> int:
    """SETTLE_CLAIM_WAIT_SECONDS in milliseconds, as `lock_timeout` reads it: the bound
    the claim (claim.sql) and a replay's function set for their transaction."""
    return int(settings.SETTLE_CLAIM_WAIT_SECONDS * 1000)


CLAIM_SQL = "receipts/sql/postgresql/claim.sql"
WRITE_SQL = "receipts/sql/postgresql/write.sql"
REPLAY_SQL = "receipts/sql/postgresql/replay.sql"


def replay(identity, asked, route, now, model, judge):
    # A replay saves nothing the agent depends on (the entry it answers with was
    # committed durably before it began), only bookkeeping: see `commit_quietly`.
    with connection.cursor() as cursor:
        cursor.execute(_replay_sql(model), {
            "scope": identity.scope, "operation": identity.operation,
            "request_id": identity.request_id, "now": now,
            "digests": json.dumps(asked.digests), "packed": asked.packed,
            "per_field": asked.per_field,
            "deleted_state": Receipt.State.DELETED.value, "attempt_identity": identity.key,
            "route": route, "wait_ms": wait_bound_ms(), "commit_quietly": commit_quietly(),
        })
        row = cursor.fetchone()
    if row is None:
        return None
    receipt = receipt_from_row(identity, row[: len(RECEIPT_COLUMNS)])
    outcome = row[len(RECEIPT_COLUMNS)]
    result = None
    effect_row = row[len(RECEIPT_COLUMNS) + 1:]
    if effect_row[0] is not None:
        result = effect_from_row(model, effect_row)
    return receipt, result, outcome


@functools.cache
def _replay_sql(model) -> str:
    """replay.sql for `model`'s table and its concrete columns, filled in once a model."""
    meta = model._meta
    return statement_file(REPLAY_SQL).format(
        effect_columns=", ".join(f"made.{f.column}" for f in meta.concrete_fields),
        effect_table=meta.db_table,
        effect_pk=meta.pk.column,
    )


UNIQUE_VIOLATION = "23505"
RECEIPTS_PRIMARY_KEY = f"{RECEIPTS}_pkey"


def write(receipt, identity, effect, route, now, unrefused, guard):
    """The claim and the write in ONE round trip: claim.sql and write.sql are sent
    together in psycopg's pipeline mode, and the pipeline's one Sync ends the implicit
    transaction they share (PostgreSQL commits it, durably, or rolls it back on any
    error).

    It replaces BEGIN, the claim, the effect's statement and COMMIT (four round trips,
    tests/board/test_statement_budget.py). Nothing of the caller runs between the two,
    so what the caller decides after the claim is decided in write.sql: `unrefused` (its
    refusal, known before) and its `guard`.

    Faults, told apart by where psycopg met them: an error the server reported for the
    claim or the second statement left nothing (the Sync never committed); a connection
    lost with no such report, or an error after both statements, may have committed.
    Inside a caller's transaction (tests, the console) the pair runs in a savepoint.
    """
    model = effect.model
    claim_params = _claim_params(receipt, model)
    names = tuple(effect.values)
    companions = effect.companions
    params = [
        identity.key, tombstone_today(now), unrefused,
        *(guard.params if guard else ()),
        *effect_params(model, effect.values),
    ]
    for companion in companions:
        params.extend(companion.params)
    sql = _write_sql(
        model, names, tuple(c.shape for c in companions), guard.sql if guard else "TRUE"
    )
    savepoint = transaction.atomic() if connection.in_atomic_block else nullcontext()
    try:
        with savepoint, connection.cursor() as claiming, connection.cursor() as writing:
            made, tombstone, returned = _claim_and_write(
                claiming, writing, receipt, statement_file(CLAIM_SQL), claim_params, sql, params
            )
    except _ClaimLost:
        return None
    result = None if made is None else model(pk=made, **effect.values)
    return receipt, result, tombstone, [list(values) for values in returned]


class _ClaimLost(Exception):
    """The claim met a committed receipt of its identity: leave the savepoint, if any,
    rolled back (the pipeline's transaction is rolled back already)."""


def _claim_lost(error: DatabaseError) -> bool:
    # Only the claim inserts a receipt: a unique violation on the receipts is the
    # identity's, whichever of its unique indexes reports it (two, while a migration
    # rebuilds the constraint), but never the primary key's. The claimed id comes from
    # the effect's sequence, which the migration moved past every receipt's id
    # (board migration 0013); should it meet one anyway, that is a fault to see, not
    # a claim someone else won.
    diag = getattr(error.__cause__, "diag", None)
    return (
        sqlstate(error) == UNIQUE_VIOLATION
        and getattr(diag, "table_name", None) == RECEIPTS
        and getattr(diag, "constraint_name", None) != RECEIPTS_PRIMARY_KEY
    )


def _claim_and_write(claiming, writing, receipt, claim, claim_params, sql, params):
    try:
        with connection.wrap_database_errors, connection.connection.pipeline():
            claiming.execute(claim, claim_params)
            writing.execute(sql, params)
    except DatabaseError as error:
        if _claim_lost(error):
            raise _ClaimLost from None
        claimed, written = (c.cursor.pgresult is not None for c in (claiming, writing))
        reported = sqlstate(error) is not None
        raise Fault(
            error,
            on_identity=reported and not claimed,
            committing=not reported or written,
        ) from None
    receipt.id, receipt.result_id, _ = claiming.fetchone()
    _, made, tombstone, *returned = writing.fetchone()
    return made, tombstone, returned


def _claim_params(receipt: Receipt, model) -> dict:
    """claim.sql's parameters, adapted by hand: the fields' own get_db_prep_save,
    JSONField's above all, was a third of the claim's time."""
    moment = connection.ops.adapt_datetimefield_value
    return {
        "scope": receipt.scope, "operation": receipt.operation,
        "request_id": receipt.request_id, "packed_digests": receipt.packed_digests,
        "state": str(receipt.state), "first_route": receipt.first_route,
        "attempts": receipt.attempts, "first_seen_at": moment(receipt.first_seen_at),
        "receipt_expires_at": moment(receipt.receipt_expires_at),
        "effect_table": model._meta.db_table, "effect_pk": model._meta.pk.column,
        "lock_timeout": str(wait_bound_ms()),
    }


@functools.cache
def _write_sql(model, names: tuple[str, ...], companions: tuple[tuple, ...], guard: str) -> str:
    """write.sql filled in once per model, set of fields, companions and guard: the
    fields' db_type, asked afresh for every post, was a tenth of a new post's Python
    time (py-spy --gil)."""
    fields = [model._meta.get_field(name) for name in names]
    return statement_file(WRITE_SQL).format(
        tombstone_in_force=statement_file(TOMBSTONE_IN_FORCE_SQL),
        guard=guard,
        effect_table=model._meta.db_table,
        effect_pk=model._meta.pk.column,
        effect_columns=", ".join(f.column for f in fields),
        effect_values=", ".join(f"CAST(%s AS {f.db_type(connection)})" for f in fields),
        companions="".join(
            f"), also_{n} AS (\n    INSERT INTO {table} ({', '.join(cols)}, {link})\n"
            f"    SELECT companion.*, made.id FROM ({rows_sql}) AS companion CROSS JOIN made\n"
            f"    RETURNING {returning}\n"
            for n, (table, cols, link, rows_sql, returning) in enumerate(companions)
        ),
        companions_returned="".join(
            f", ARRAY(SELECT {returning} FROM also_{n})"
            for n, (_, _, _, _, returning) in enumerate(companions)
        ),
    )
