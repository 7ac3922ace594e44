"""Retention's side of the idempotency engine: receipts into tombstones, in batches.

The purges (maintenance.purges) decide *which* receipts go; these functions know how
receipts are found, locked and replaced by tombstones. On PostgreSQL selections that
lock use SKIP LOCKED, so two purge runs split the work and a purge never waits behind a
retry that holds a receipt (a retry bumps `attempts`, which locks the row); on SQLite
the immediate write transaction serializes everything.

Plain SQL, batched: a purge moves thousands of rows a second, and the ORM's cost per
row (model instances, a parameter per value in `IN (...)`) was most of the time. Each
statement is a `.sql` file of `sql/postgresql/` or `sql/sqlite/` beside this module,
which says why it is written so; what else differs by engine is a module each
(postgresql.py, sqlite.py).
"""

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import connection

from board.retention.holds import thread_not_held_sql
from maintenance import tombstones as engines
from receipts import engine
from receipts.fingerprint import Identity
from receipts.function_file import statement_file
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
    # None on PostgreSQL, where the identity stays in the database (sql/postgresql/).
    request_id: uuid.UUID | None
    state: str
    result_id: int | None
    # Whether the receipt was due at the `now` the query was given (compared by the
    # database: each statement's last column), and its expiry and deletion moment as the
    # database returned them, parsed only when needed: converting thousands of timestamps a batch
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
        is SQL, in sql/postgresql/entomb.sql)."""
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


def statement(name: str, **slots: str) -> str:
    """The statement `name` of the connection's engine, kept in a `.sql` file of
    `sql/<engine>/` beside this module (see `statement_at`)."""
    return statement_at(f"maintenance/tombstones/sql/{{engine}}/{name}.sql", **slots)


def statement_at(path: str, **slots: str) -> str:
    """The statement kept in the `.sql` file at `path` (from the project's root, with
    `{engine}` for the connection's engine: postgresql or sqlite), read once a process,
    its named slots filled. A slot holds what the text cannot: a limit written into it,
    SQLite's placeholders of a list, the holds' rule; each file says which it has."""
    text = statement_file(path.replace("{engine}", engine.for_connection(_ENGINES)))
    for slot, value in slots.items():
        if "{" + slot + "}" not in text:
            raise ValueError(f"{path} has no slot {slot}")
        text = text.replace("{" + slot + "}", value)
    return text


_ENGINES = {"postgresql": "postgresql", "sqlite": "sqlite"}


def values_in(name: str, values: Collection) -> tuple[dict[str, str], dict[str, object]]:
    """A list as its statement takes it: on PostgreSQL one array parameter `name` (its
    text, `{1,2,3}`, cast on the server: building it with `join` is far cheaper than the
    driver adapting thousands of values one by one); on SQLite a placeholder a value, in
    the slot `name`. Returns the slots and the parameters."""
    return engines.for_connection().values_in(name, list(values))


def sql_moment(moment: datetime):
    return connection.ops.adapt_datetimefield_value(moment)


def _receipt_rows(sql: str, params: dict) -> list[ReceiptRow]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
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


# A run's first batch starts before every receipt: one statement walks every batch.
BEFORE_THE_OLDEST = (datetime(1, 1, 1, tzinfo=UTC), 0)


def _after(after: tuple[datetime, int] | None) -> dict:
    moment, last_id = after or BEFORE_THE_OLDEST
    return {"after_moment": sql_moment(moment), "after_id": last_id}


def receipts_due(
    *,
    operation: str,
    now: datetime,
    limit: int,
    deleted_before: datetime,
    after: tuple[datetime, int] | None = None,
) -> list[ReceiptRow]:
    """Receipts due at `now`, oldest expiry first, not locked (receipts_due.sql);
    `after` is the last `(receipt_expires_at, id)` a run already looked at."""
    params = {
        "operation": operation,
        "now": sql_moment(now),
        "deleted_before": sql_moment(deleted_before),
        **_after(after),
    }
    return _receipt_rows(statement("receipts_due", limit=str(int(limit))), params)


def receipts_deleted_due(
    *,
    operation: str,
    now: datetime,
    deleted_before: datetime,
    limit: int,
    after: tuple[datetime, int] | None = None,
) -> list[ReceiptRow]:
    """Deleted receipts of threads no hold covers whose `deleted_at` is at or before
    `deleted_before`, oldest deletion first, locked (receipts_deleted_due.sql); `after`
    is the last `(deleted_at, id)` the run looked at."""
    params = {
        "operation": operation,
        "now": sql_moment(now),
        "deleted_before": sql_moment(deleted_before),
        "deleted": Receipt.State.DELETED.value,
        **_after(after),
    }
    thread = thread_not_held_sql("COALESCE(board_entry.parent_id, board_entry.id)")
    sql = statement("receipts_deleted_due", limit=str(int(limit)), thread_not_held=thread)
    return _receipt_rows(sql, params)


def receipts_for_results(
    *, operation: str, result_ids: Collection[int], now: datetime
) -> list[ReceiptRow]:
    """The receipts of these results (`expired` as of `now`), not locked."""
    if not result_ids:
        return []
    slots, params = values_in("result_ids", result_ids)
    return _receipt_rows(
        statement("receipts_for_results", **slots),
        {"operation": operation, "now": sql_moment(now), **params},
    )


def receipts_claim_for_results(
    *, operation: str, result_ids: Collection[int], now: datetime, deleted_before: datetime
) -> tuple[list[ReceiptRow], set[int]]:
    """Lock the receipts of these results (`expired`: due at `now`, a deleted one by its
    `deleted_at` against `deleted_before`).

    Returns the rows this transaction now holds, and the results with a receipt it could
    not lock: on PostgreSQL a receipt another transaction holds is skipped, not waited
    for (receipts_claim_for_results.sql).
    """
    if not result_ids:
        return [], set()
    slots, params = values_in("result_ids", result_ids)
    params = {"operation": operation, **params}
    held = _receipt_rows(
        statement("receipts_claim_for_results", **slots),
        {**params, "now": sql_moment(now), "deleted_before": sql_moment(deleted_before)},
    )
    return held, engines.for_connection().results_not_held(params, held)


def receipts_lock(*, ids: Collection[int], now: datetime) -> list[ReceiptRow]:
    """Lock these receipts (PostgreSQL), leaving out any another transaction holds."""
    if not ids:
        return []
    slots, params = values_in("ids", ids)
    return _receipt_rows(
        statement("receipts_lock", **slots), {"now": sql_moment(now), **params}
    )


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


def ids_oldest(path: str, params: dict, *, limit: int) -> list:
    """The primary keys the statement at `path` (see `statement_at`) selects, a batch of
    `limit` written into its slot `limit`: the caller's oldest rows by a partial index,
    locked skipping those another transaction holds (PostgreSQL)."""
    with connection.cursor() as cursor:
        cursor.execute(statement_at(path, limit=str(int(limit))), params)
        return [row[0] for row in cursor.fetchall()]


def delete_ids(model, ids: Collection) -> int:
    """Delete these rows by primary key (`<table>_delete.sql`)."""
    return _delete(model, model._meta.pk, f"{model._meta.db_table}_delete", ids)


def delete_where(model, field_name: str, values: Collection) -> int:
    """Delete the rows whose `field_name` is one of `values`
    (`<table>_delete_by_<field_name>.sql`)."""
    field = model._meta.get_field(field_name)
    name = f"{model._meta.db_table}_delete_by_{field_name}"
    return _delete(model, field, name, values)


def _delete(model, field, name: str, values: Collection) -> int:
    if not values:
        return 0
    values = list(values)
    if isinstance(values[0], uuid.UUID):  # text on SQLite
        values = [field.get_db_prep_value(value, connection) for value in values]
    slots, params = values_in("ids", values)
    with connection.cursor() as cursor:
        cursor.execute(statement(name, **slots), params)
        return cursor.rowcount
