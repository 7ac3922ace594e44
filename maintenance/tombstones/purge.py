"""Retention's side of the idempotency engine: receipts into tombstones, in batches.

The purges (maintenance.purges) decide *which* receipts go; these functions know how
receipts are found, locked and replaced by tombstones. On PostgreSQL selections that
lock use SKIP LOCKED, so two purge runs split the work and a purge never waits behind a
retry that holds a receipt (a retry bumps `attempts`, which locks the row); on SQLite
the immediate write transaction serializes everything.

Plain SQL, batched: a purge moves thousands of rows a second, and the ORM's cost per
row (model instances, a parameter per value in `IN (...)`) was most of the time. On
PostgreSQL a list is one array parameter (`= ANY(%s)`), which also plans once. What
differs by engine is in maintenance/tombstones/, one module per engine.
"""

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection

from maintenance import tombstones as engines
from receipts.fingerprint import Identity
from receipts.models import Attempt, Receipt, Tombstone, tombstone_today
from receipts.models import tombstone_expiry_day as tombstone_expiry_day  # re-exported
from receipts.statements import read_moment


@dataclass(slots=True)
class ReceiptRow:
    """The columns a purge needs; never the digests. (Slots, not frozen: a purge builds
    thousands of these a second, and a frozen dataclass is several times slower to make.)"""

    id: int
    scope: str | None
    operation: str | None
    # None on PostgreSQL, where the identity stays in the database (see _receipt_rows).
    request_id: uuid.UUID | None
    state: str
    result_id: int | None
    # Whether the receipt was due at the `now` the query was given (compared by the
    # database: see _due_sql), and its expiry and deletion moment as the database
    # returned them, parsed only when needed: converting thousands of timestamps a batch
    # was a large share of a purge's time.
    expired: bool
    expires_raw: object
    deleted_raw: object = None

    @property
    def key(self) -> uuid.UUID:
        return Identity(self.scope, self.operation, self.request_id).key

    @property
    def receipt_expires_at(self) -> datetime:
        return read_moment(self.expires_raw)

    @property
    def deleted_at(self) -> datetime | None:
        return None if self.deleted_raw is None else read_moment(self.deleted_raw)

    def tombstone(
        self, *, tombstone_retention: timedelta, deletion_retention: timedelta
    ) -> Tombstone:
        """What is left of this receipt: see receipts_entomb (on PostgreSQL the same rule
        is SQL, in maintenance/tombstones/postgresql.py)."""
        return Tombstone(
            key=self.key,
            reason=Tombstone.Reason.DELETED
            if self.state == Receipt.State.DELETED
            else Tombstone.Reason.EXPIRED,
            expires_at=tombstone_expiry_day(self._expiry(deletion_retention) + tombstone_retention),
        )

    def _expiry(self, deletion_retention: timedelta) -> datetime:
        if self.state != Receipt.State.DELETED or self.deleted_at is None:
            return self.receipt_expires_at
        return max(self.receipt_expires_at, self.deleted_at + deletion_retention)


def sql_in(column: str, values: Collection) -> tuple[str, list]:
    """`column IN (values)` as SQL and parameters; one array parameter on PostgreSQL."""
    return engines.for_connection().sql_in(column, values)


def skip_locked() -> str:
    """Lock the selected rows, skipping those another transaction holds (PostgreSQL);
    nothing on SQLite, where the write transaction already excludes everyone else."""
    return engines.for_connection().skip_locked()


def indexed_by(index: str) -> str:
    """After a table's name: read it by this index (SQLite's `INDEXED BY`, which fails
    the statement if the index cannot serve it); nothing on PostgreSQL."""
    return engines.for_connection().indexed_by(index)


def sql_moment(moment: datetime):
    return connection.ops.adapt_datetimefield_value(moment)


_RECEIPTS = RECEIPTS_TABLE = Receipt._meta.db_table


def _due_sql(*, now: datetime, deleted_before: datetime | None) -> tuple[str, list]:
    """SQL true when a receipt is due for removal at `now`: a live one once its
    `receipt_expires_at` has passed (fixed at the write: a promise); a deleted one, when
    the caller gives `deleted_before` (now minus the `deletion` policy in force at this
    purge), once its `deleted_at` is that old, whatever expiry the delete reckoned with
    (SPEC 8.1: `deletion` applies at the next purge, shortened or lengthened)."""
    if deleted_before is None:
        return "receipt_expires_at <= %s", [sql_moment(now)]
    return (
        "CASE WHEN deleted_at IS NULL THEN receipt_expires_at <= %s ELSE deleted_at <= %s END",
        [sql_moment(now), sql_moment(deleted_before)],
    )


def _receipt_rows(
    where: str,
    params: list,
    *,
    now: datetime,
    deleted_before: datetime | None = None,
    tail: str = "",
    with_expiry: bool = True,
) -> list[ReceiptRow]:
    # Identity, expiry, deletion: on PostgreSQL the tombstones are made in SQL from the
    # receipt rows themselves (receipts_entomb), so the identity need not travel, and the
    # moments only where asked.
    columns = engines.for_connection().row_columns(with_expiry=with_expiry)
    due, due_params = _due_sql(now=now, deleted_before=deleted_before)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, {columns}, state, result_id, {due} "
            f"FROM {_RECEIPTS} WHERE {where}{tail}",
            [*due_params, *params],
        )
        rows = cursor.fetchall()
    return [
        ReceiptRow(
            id=row[0],
            scope=row[1],
            operation=row[2],
            # SQLite keeps 32 hex digits; a UUID's text is the canonical form.
            request_id=uuid.UUID(row[3]) if row[3] else None,
            expires_raw=row[4],
            deleted_raw=row[5],
            state=row[6],
            result_id=row[7],
            expired=bool(row[8]),
        )
        for row in rows
    ]


def receipts_due(
    *,
    operation: str,
    now: datetime,
    limit: int,
    after: tuple[datetime, int] | None = None,
    state: str | None = None,
    lock: bool = True,
    extra: str = "",
    extra_params: tuple = (),
    deleted_before: datetime | None = None,
) -> list[ReceiptRow]:
    """Receipts whose `receipt_expires_at` has passed at `now`, oldest expiry first; with
    `lock`, locked (PostgreSQL, skipping rows another transaction holds). (A deleted
    receipt's row says whether it is due by its deletion: see receipts_deleted_due.)
    With `deleted_before`, a deleted receipt is left out until its `deleted_at` is that
    old: its expiry, kept as promised, comes long before its deletion record may go, and
    a walk that met it every run would spend its batches on receipts it cannot take.

    `after` is the last `(receipt_expires_at, id)` a run already looked at, so a run walks
    past receipts it had to leave (a thread not yet wholly expired) instead of rereading
    them every batch. `extra` is a further SQL condition of the caller's (its
    parameters in `extra_params`), e.g. the holds' anti-join; `RECEIPTS_TABLE` names the
    receipt row.
    """
    where = "operation = %s AND receipt_expires_at <= %s"
    params: list = [operation, sql_moment(now)]
    if deleted_before is not None:
        where += " AND (deleted_at IS NULL OR deleted_at <= %s)"
        params.append(sql_moment(deleted_before))
    if extra:
        where += f" AND {extra}"
        params += list(extra_params)
    if state is not None:
        where += " AND state = %s"
        params.append(state)
    if after is not None:
        # The first condition is the one the expiry index can start from.
        moment, last_id = after
        where += " AND receipt_expires_at >= %s AND (receipt_expires_at > %s OR id > %s)"
        params += [sql_moment(moment), sql_moment(moment), last_id]
    # Qualified: a bare name in ORDER BY means the output column first, and on
    # PostgreSQL that is the `::text` of _receipt_rows, which sorted every due row as
    # text instead of walking the expiry index.
    tail = f" ORDER BY {_RECEIPTS}.receipt_expires_at, {_RECEIPTS}.id LIMIT {int(limit)}"
    return _receipt_rows(where, params, now=now, tail=tail + (skip_locked() if lock else ""))


def receipts_deleted_due(
    *,
    operation: str,
    now: datetime,
    deleted_before: datetime,
    limit: int,
    after: tuple[datetime, int] | None = None,
    extra: str = "",
    extra_params: tuple = (),
) -> list[ReceiptRow]:
    """Deleted receipts whose `deleted_at` is at or before `deleted_before` (now minus the
    `deletion` policy in force at this purge), oldest deletion first, locked (PostgreSQL,
    skipping rows another transaction holds).

    By `deleted_at`, not by the expiry the delete stored: a policy shortened since then
    acts at this purge, and one lengthened keeps the receipt (SPEC 8.2). `after` is the
    last `(deleted_at, id)` the run looked at; `extra` as in receipts_due. Served by the
    partial index receipt_deleted.
    """
    where = "operation = %s AND deleted_at IS NOT NULL AND deleted_at <= %s AND state = %s"
    params: list = [operation, sql_moment(deleted_before), Receipt.State.DELETED.value]
    if extra:
        where += f" AND {extra}"
        params += list(extra_params)
    if after is not None:
        moment, last_id = after
        where += " AND deleted_at >= %s AND (deleted_at > %s OR id > %s)"
        params += [sql_moment(moment), sql_moment(moment), last_id]
    # Qualified, as in receipts_due.
    tail = f" ORDER BY {_RECEIPTS}.deleted_at, {_RECEIPTS}.id LIMIT {int(limit)}{skip_locked()}"
    return _receipt_rows(where, params, now=now, deleted_before=deleted_before, tail=tail)


def receipts_for_results(
    *, operation: str, result_ids: Collection[int], now: datetime, lock: bool = False
) -> list[ReceiptRow]:
    """The receipts of these results (`expired` as of `now`); with `lock`, only those
    this transaction could lock."""
    if not result_ids:
        return []
    condition, params = sql_in("result_id", result_ids)
    return _receipt_rows(
        f"operation = %s AND {condition}", [operation, *params],
        now=now, tail=skip_locked() if lock else "",
    )


def receipts_claim_for_results(
    *, operation: str, result_ids: Collection[int], now: datetime, deleted_before: datetime
) -> tuple[list[ReceiptRow], set[int]]:
    """Lock the receipts of these results (`expired`: due at `now`, a deleted one by its
    `deleted_at` against `deleted_before`, as in receipts_deleted_due).

    Returns the rows this transaction now holds, and the results with a receipt it could
    not lock: on PostgreSQL a receipt another transaction holds (a retry counting its
    attempt, another purge) is skipped, not waited for. Counting first keeps the usual
    case, nothing skipped, to one extra cheap query.
    """
    if not result_ids:
        return [], set()
    condition, params = sql_in("result_id", result_ids)
    where = f"operation = %s AND {condition}"
    held = _receipt_rows(
        where, [operation, *params], now=now, deleted_before=deleted_before,
        tail=skip_locked(), with_expiry=False,
    )
    return held, engines.for_connection().results_not_held(where, [operation, *params], held)


def receipts_lock(*, ids: Collection[int], now: datetime) -> list[ReceiptRow]:
    """Lock these receipts (PostgreSQL), leaving out any another transaction holds."""
    if not ids:
        return []
    condition, params = sql_in("id", ids)
    return _receipt_rows(condition, params, now=now, tail=skip_locked(), with_expiry=False)


def receipts_entomb(
    *,
    receipts: Collection[ReceiptRow],
    tombstone_retention: timedelta,
    deletion_retention: timedelta,
) -> int:
    """Replace receipts by tombstones; call inside the transaction that locked them.

    One tombstone per identity: the 16-byte identity digest as key, the reason, and the
    receipt's expiry plus `tombstone_retention` (SETTLE_TOMBSTONE_RETENTION: "from the
    expiry of the receipt it replaced"). A deleted receipt expires at the later of the
    expiry its delete stored and `deleted_at + deletion_retention` (the policy in force
    at this purge): a policy lengthened since the delete must not leave a tombstone
    that is already past its own expiry, and one shortened never shortens a tombstone.
    A stale tombstone of the same identity (expired, not yet purged, then the id was
    used again) is overwritten.
    """
    if not receipts:
        return 0
    return engines.for_connection().entomb(receipts, tombstone_retention, deletion_retention)


def tombstones_purge(*, now: datetime, limit: int) -> int:
    """Remove up to `limit` tombstones past their expiry; after that an old id is unknown."""
    # The complement of receipts.services.tombstones_in_force, on the same day.
    due = Tombstone.objects.filter(expires_at__lte=tombstone_today(now))
    due = due.order_by("expires_at")[:limit]
    keys = list(due.select_for_update(skip_locked=True).values_list("key", flat=True))
    return delete_ids(Tombstone, keys)


def attempts_purge(*, before: datetime, limit: int) -> int:
    """Remove up to `limit` attempts logged before `before`."""
    due = Attempt.objects.filter(created_at__lt=before).order_by("created_at")[:limit]
    ids = list(due.select_for_update(skip_locked=True).values_list("id", flat=True))
    return delete_ids(Attempt, ids)


def oldest_ids(
    model, *, index: str, where: str, params: list, order_by: str, limit: int
) -> list:
    """The primary keys of the first `limit` rows by `order_by` that satisfy `where`, read
    by the partial index `index` whose condition `where` repeats (SQLite: `INDEXED BY`,
    for without statistics its planner prefers an index led by an equality and sorts
    every row it finds), locked skipping those another transaction holds (PostgreSQL)."""
    table = connection.ops.quote_name(model._meta.db_table)
    pk = connection.ops.quote_name(model._meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {pk} FROM {table}{indexed_by(index)} WHERE {where} "
            f"ORDER BY {order_by} LIMIT {int(limit)}{skip_locked()}",
            params,
        )
        return [row[0] for row in cursor.fetchall()]


def delete_ids(model, ids: Collection) -> int:
    """`DELETE ... WHERE pk IN (...)` without the ORM's cascade collector.

    The collector reads every row (and its relations) before deleting; the purges have
    already decided and locked what goes, so one plain statement does.
    """
    return delete_where(model, model._meta.pk.name, ids)


def delete_where(model, field_name: str, values: Collection) -> int:
    """`DELETE ... WHERE field IN (values)` (delete_ids' statement, by any column)."""
    if not values:
        return 0
    field = model._meta.get_field(field_name)
    values = list(values)
    if isinstance(values[0], uuid.UUID):  # text on SQLite
        values = [field.get_db_prep_value(value, connection) for value in values]
    condition, params = sql_in(connection.ops.quote_name(field.column), values)
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {connection.ops.quote_name(model._meta.db_table)} WHERE {condition}",
            params,
        )
        return cursor.rowcount
