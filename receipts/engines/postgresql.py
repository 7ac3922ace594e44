"""The idempotency engine's statements on PostgreSQL, chosen in receipts/engines/__init__.py.

The write path in as few statements as PostgreSQL allows (data-modifying CTEs).

Replaces, for a new post, the tombstone read, the entry's ORM INSERT, the receipt's
result_id UPDATE and the attempt's ORM INSERT (four round trips, three compiled by
the ORM each time) with one; for a replay, the receipt read, its UPDATE, the entry
read and the attempt INSERT, and the transaction around them, with one. Measured
(tests/bench/profile_post.py, cProfile, 300 posts on PostgreSQL): 7,540 Python calls
and 13 round trips a new post before, 2,840 and 6 after; the ORM's SQL compilation
(`as_sql`) was 12% of the profiled time before and is gone from this path.

"""

import functools
import json
from contextlib import nullcontext

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from receipts.faults import Fault, sqlstate
from receipts.models import Receipt, tombstone_today
from receipts.statements import (
    CLAIM_FIELDS,
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


def wait_bound() -> str:
    """An SQL expression that bounds, for the rest of the transaction running it, how long
    any statement waits for a lock: `lock_timeout` of SETTLE_CLAIM_WAIT_SECONDS (PostgreSQL).

    The claim evaluates it before it locks anything, in its own statement (a replay's
    function sets the same bound first, from `wait_bound_ms`), so the bound costs no
    round trip and needs nothing of the connection:
    `set_config(..., true)` is SET LOCAL, which a pooler in transaction mode (PgBouncer)
    keeps, because the transaction runs on one server connection from BEGIN to COMMIT.
    A connection's startup option `-c lock_timeout=...` would not do: PgBouncer refuses it
    (`unsupported startup parameter: options`), and ignored, the bound would be gone.
    Past the bound the claim answers in_progress, any other wait unavailable.
    """
    return f"set_config('lock_timeout', '{wait_bound_ms()}', true)"


def wait_bound_ms() -> int:
    """SETTLE_CLAIM_WAIT_SECONDS in milliseconds, as `lock_timeout` reads it."""
    return int(settings.SETTLE_CLAIM_WAIT_SECONDS * 1000)


@functools.cache
def claim_sql(model) -> str:
    """The claim: the receipt INSERTed, its row SELECTed from `wait_bound()`, so the
    bound is set for the transaction before the INSERT can wait on another claim, and
    the effect's id reserved (`result_id_at_claim`). One row: the receipt's id and
    result_id, and the id left in the transaction's setting CLAIMED for `write`'s second
    statement. Built once.

    A plain INSERT, not `ON CONFLICT DO NOTHING`: it waits for another claim of the same
    identity as that does, and once that one commits it fails on the identity's unique
    constraint, which `write` answers as a lost claim. ON CONFLICT inserts
    speculatively and confirms the row: a WAL record of 48 bytes on every new post, for
    a race a post seldom meets (the admission looked for a committed receipt first)."""
    # Typed placeholders, as INSERT ... SELECT does not infer them from the columns; text,
    # not varchar(n), for strings, so a value too long fails as in VALUES, never truncated.
    columns = [f.column for f in CLAIM_FIELDS] + ["result_id"]
    values = [
        f"CAST(%s AS {'text' if f.get_internal_type() == 'CharField' else f.db_type(connection)})"
        for f in CLAIM_FIELDS
    ] + [result_id_at_claim(model)]
    return (
        f"WITH claimed AS (INSERT INTO {RECEIPTS} ({', '.join(columns)}) "
        f"SELECT {', '.join(values)} FROM (SELECT {wait_bound()}) AS bound "
        f"RETURNING id, result_id) "
        f"SELECT (SELECT id FROM claimed), (SELECT result_id FROM claimed), "
        f"set_config('{CLAIMED}', COALESCE((SELECT id::text FROM claimed), ''), true)"
    )



def replay(identity, asked, route, now, model, judge):
    # One statement, in its own (auto)commit: the function `receipts_replay`
    # (receipts/sql/receipts_replay.sql) locks and counts the receipt, judges the attempt
    # and logs it, and this statement joins the effect. The join reads the snapshot this
    # statement started with, which holds the effect whenever the receipt's commit came
    # before it began (the caller saw it, or its claim waited for it and rolled back
    # before this).
    # A replay saves nothing the agent depends on (the entry it answers with was
    # committed durably before it began), only bookkeeping: see `commit_quietly`.
    join, columns = "", ""
    if model is not None:
        fields = model._meta.concrete_fields
        columns = ", " + ", ".join(f"made.{f.column}" for f in fields)
        join = (
            f" LEFT JOIN {model._meta.db_table} made "
            f"ON made.{model._meta.pk.column} = hit.result_id"
        )
    sql = (
        f"SELECT {', '.join(f'hit.{c}' for c in RECEIPT_COLUMNS)}, hit.outcome{columns} "
        f"FROM receipts_replay(%s, %s, %s, %s, CAST(%s AS jsonb), %s, %s, %s, %s, %s, %s) "
        f"AS hit{join}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [
            identity.scope, identity.operation, identity.request_id, now,
            json.dumps(asked.digests), asked.packed, Receipt.State.DELETED.value, identity.key,
            route,
            wait_bound_ms(), commit_quietly(),
        ])
        row = cursor.fetchone()
    if row is None:
        return None
    receipt = receipt_from_row(identity, row[: len(RECEIPT_COLUMNS)])
    outcome = row[len(RECEIPT_COLUMNS)]
    result = None
    effect_row = row[len(RECEIPT_COLUMNS) + 1:]
    if model is not None and effect_row[0] is not None:
        result = effect_from_row(model, effect_row)
    return receipt, result, outcome

def result_id_at_claim(model) -> str:
    """The effect's id, drawn from its table's sequence by the claim itself, so the
    receipt is written once with its result_id. Setting it afterwards was an UPDATE
    of an indexed column, never HOT: a second version of the receipt and an entry
    in each of its five indexes, on every new post. A claim that loses or rolls back
    leaves a gap in the ids, as any rolled-back insert does."""
    return (
        f"nextval(pg_get_serial_sequence('{model._meta.db_table}', "
        f"'{model._meta.pk.column}'))"
    )

# A transaction-local setting: the claim's receipt id, for the statement after it.
CLAIMED = "settle.claimed"
UNIQUE_VIOLATION = "23505"


def write(receipt, identity, effect, route, now, unrefused, guard):
    """The claim and the write in ONE round trip: the claim and the statement after it
    are sent together in psycopg's pipeline mode, and the pipeline's one Sync ends the
    implicit transaction they share (PostgreSQL commits it, durably, or rolls it back on
    any error). The second statement still has a snapshot of its own, taken after the
    claim's wait, so the tombstone read sees what a purge the claim waited for left.

    It replaces BEGIN, the claim, the effect's statement and COMMIT (four round trips,
    tests/board/test_statement_budget.py). Nothing of the caller runs between the two,
    so what the caller decides after the claim is decided in SQL: `unrefused` (its
    refusal, known before) and its `guard`. A refused write withdraws the claim
    (DELETE of the row the claim inserted) and commits nothing else.

    Faults, told apart by where psycopg met them: an error the server reported for the
    claim or the second statement left nothing (the Sync never committed); a connection
    lost with no such report, or an error after both statements, may have committed.
    Inside a caller's transaction (tests, the console) the pair runs in a savepoint.
    """
    claim_params = _claim_params(receipt)
    model = effect.model
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
                claiming, writing, receipt, claim_sql(model), claim_params, sql, params
            )
    except _ClaimLost:
        return None
    result = None if made is None else model(pk=made, **effect.values)
    return receipt, result, tombstone, [list(values) for values in returned]


class _ClaimLost(Exception):
    """The claim met a committed receipt of its identity: leave the savepoint, if any,
    rolled back (the pipeline's transaction is rolled back already)."""


def _claim_lost(error: DatabaseError) -> bool:
    # Only the claim inserts a receipt, and its id comes from the sequence: a unique
    # violation on the receipts is the identity's, whichever of its unique indexes
    # reports it (two, while a migration rebuilds the constraint).
    diag = getattr(error.__cause__, "diag", None)
    return (
        sqlstate(error) == UNIQUE_VIOLATION and getattr(diag, "table_name", None) == RECEIPTS
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


def _claim_params(receipt: Receipt) -> list:
    """The claim's parameters in `CLAIM_FIELDS` order, adapted by hand: the fields' own
    get_db_prep_save, JSONField's above all, was a third of the claim's time."""
    moment = connection.ops.adapt_datetimefield_value
    return [
        receipt.scope, receipt.operation, receipt.request_id, receipt.packed_digests,
        str(receipt.state), receipt.first_route, receipt.attempts, moment(receipt.first_seen_at),
        moment(receipt.last_seen_at), moment(receipt.receipt_expires_at),
    ]


@functools.cache
def _write_sql(model, names: tuple[str, ...], companions: tuple[tuple, ...], guard: str) -> str:
    # Built once per model, set of fields, companions and guard: the fields' db_type,
    # asked afresh for every post, was a tenth of a new post's Python time (py-spy --gil).
    fields = [model._meta.pk, *(model._meta.get_field(name) for name in names)]
    columns = ", ".join(f.column for f in fields[1:])
    # Typed placeholders: an INSERT ... SELECT does not infer a NULL's type.
    typed = ", ".join(f"CAST(%s AS {f.db_type(connection)})" for f in fields[1:])
    also = "".join(
        f"""), also_{n} AS (
            INSERT INTO {table} ({", ".join(cols)}, {link})
            SELECT companion.*, made.id FROM ({rows_sql}) AS companion CROSS JOIN made
            RETURNING {returning}"""
        for n, (table, cols, link, rows_sql, returning) in enumerate(companions)
    )
    returned = "".join(
        f", ARRAY(SELECT {returning} FROM also_{n})"
        for n, (_, _, _, _, returning) in enumerate(companions)
    )
    return f"""
        WITH claimed AS (
            SELECT id, result_id FROM {RECEIPTS}
            WHERE id = NULLIF(current_setting('{CLAIMED}', true), '')::bigint
        ), tomb AS (
            {TOMBSTONE_IN_FORCE_SQL}
        ), allowed AS (
            SELECT id, result_id FROM claimed
            WHERE NOT EXISTS (SELECT 1 FROM tomb) AND %s AND ({guard})
        ), made AS (
            INSERT INTO {model._meta.db_table} ({model._meta.pk.column}, {columns})
            SELECT allowed.result_id, {typed} FROM allowed
            RETURNING {model._meta.pk.column} AS id
        ), withdrawn AS (
            DELETE FROM {RECEIPTS} WHERE id IN (SELECT id FROM claimed)
                AND NOT EXISTS (SELECT 1 FROM allowed)
        {also})
        SELECT (SELECT id FROM claimed), (SELECT id FROM made), (SELECT reason FROM tomb)
            {returned}
    """
