"""The purge's statements on PostgreSQL, chosen in maintenance/tombstones/__init__.py.

Selections that lock use SKIP LOCKED, so two purge runs split the work and a purge never
waits behind a retry that holds a receipt. A list is one array parameter (`= ANY(%s)`),
which also plans once. The tombstones are made in SQL from the rows the receipts'
DELETE returns, so a receipt's identity and moments never travel to Python.
"""

import uuid
from collections.abc import Collection
from datetime import timedelta

from django.db import connection

from receipts.fingerprint import IDENTITY_KEY_SQL
from receipts.models import TOMBSTONE_EXPIRY_DAY_SQL, Receipt, Tombstone

RECEIPTS = Receipt._meta.db_table
TOMBSTONES = Tombstone._meta.db_table


def sql_in(column: str, values: Collection) -> tuple[str, list]:
    """`column = ANY(array)`: the array goes as one text literal (`{1,2,3}`) cast on the
    server; building it with `join` is far cheaper than the driver adapting thousands of
    values one by one."""
    values = list(values)
    kind = "uuid" if values and isinstance(values[0], uuid.UUID) else "bigint"
    return f"{column} = ANY(%s::{kind}[])", [_array_literal(values)]


def _array_literal(values: Collection) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def indexed_by(index: str) -> str:
    """Nothing: the planner's statistics pick the partial index by themselves."""
    return ""


def skip_locked() -> str:
    """Lock the selected rows, skipping those another transaction holds."""
    return " FOR UPDATE SKIP LOCKED"


def row_columns(*, with_expiry: bool) -> str:
    """The identity and the moments of purge.ReceiptRow: the identity stays in the
    database (`entomb` makes the tombstones from the rows), the moments only where asked."""
    moments = "receipt_expires_at::text, deleted_at::text" if with_expiry else "NULL, NULL"
    return f"NULL, NULL, NULL, {moments}"


def results_not_held(where: str, params: list, held: Collection) -> set[int]:
    """The results matching `where` whose receipt another transaction holds (a retry
    counting its attempt, another purge), so SKIP LOCKED left it out of `held`. Counting
    first keeps the usual case, nothing skipped, to one cheap query."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {RECEIPTS} WHERE {where}", params)
        if cursor.fetchone()[0] == len(held):
            return set()
        cursor.execute(f"SELECT id, result_id FROM {RECEIPTS} WHERE {where}", params)
        held_ids = {row.id for row in held}
        return {result for id_, result in cursor.fetchall() if id_ not in held_ids}


def entomb(
    receipts: Collection, tombstone_retention: timedelta, deletion_retention: timedelta
) -> int:
    # One statement: the receipts are deleted and their tombstones made from what the
    # DELETE returns, the key and the day by the SQL forms of the Python rules
    # (fingerprint.IDENTITY_KEY_SQL, models.TOMBSTONE_EXPIRY_DAY_SQL), the expiry as
    # purge.ReceiptRow.tombstone reckons it.
    expiry = (
        "CASE WHEN state = %(deleted_state)s AND deleted_at IS NOT NULL "
        "THEN GREATEST(receipt_expires_at, deleted_at + %(deletion)s) "
        "ELSE receipt_expires_at END + %(retention)s"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH gone AS (
                DELETE FROM {RECEIPTS} WHERE id = ANY(%(ids)s::bigint[])
                RETURNING scope, operation, request_id, state, receipt_expires_at, deleted_at
            )
            INSERT INTO {Tombstone._meta.db_table} (key, reason, expires_at)
            SELECT
                {IDENTITY_KEY_SQL},
                CASE WHEN state = %(deleted_state)s THEN %(deleted)s ELSE %(expired)s END,
                {TOMBSTONE_EXPIRY_DAY_SQL.format(moment=expiry)}
            FROM gone
            ORDER BY 1
            ON CONFLICT (key) DO UPDATE
                SET reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at
            """,
            {
                "ids": _array_literal(row.id for row in receipts),
                "deleted_state": Receipt.State.DELETED.value,
                "deleted": int(Tombstone.Reason.DELETED),
                "expired": int(Tombstone.Reason.EXPIRED),
                "retention": tombstone_retention,
                "deletion": deletion_retention,
            },
        )
        return cursor.rowcount


def tombstones_disk_size(count: int) -> tuple[int, str]:
    """Bytes the tombstone table and its indexes take, from the catalog (`count`, the
    rows, is SQLite's to use)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size(%s::regclass)", [TOMBSTONES])
        return cursor.fetchone()[0], "pg_total_relation_size"


def tombstones_planned() -> tuple[int, int, str]:
    """The planner's row count (`reltuples`, as of the last ANALYZE) and the size on
    disk, both from the catalog (no scan of a table that grows with every purge), and
    where they were read."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint, pg_total_relation_size(oid) FROM pg_class "
            "WHERE oid = %s::regclass", [TOMBSTONES],
        )
        return (*cursor.fetchone(), "pg_class")


def runs_need_a_lease() -> bool:
    """Two purge runs split the rows between them (SKIP LOCKED): neither waits."""
    return False
