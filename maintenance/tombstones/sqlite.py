"""The purge's engine functions on SQLite, chosen in maintenance/tombstones/__init__.py;
its statements are in sql/sqlite/. Its immediate write transaction already excludes
everyone else, so nothing locks rows; it has no sha256, so the tombstones are made in
Python."""

from collections.abc import Collection
from datetime import timedelta

from django.db import DatabaseError, connection

from maintenance.tombstones import purge
from receipts.models import Receipt, Tombstone


def values_in(name: str, values: list) -> tuple[dict[str, str], dict[str, object]]:
    """No array parameter: a named placeholder a value, in the statement's slot `name`."""
    names = [f"{name}_{n}" for n in range(len(values))]
    slot = ", ".join(f"%({each})s" for each in names)
    return {name: slot}, dict(zip(names, values, strict=True))


def results_not_held(params: dict, held: Collection) -> set[int]:
    return set()


def entomb(
    receipts: Collection, tombstone_retention: timedelta, deletion_retention: timedelta
) -> int:
    # One tombstone per identity (purge.ReceiptRow.tombstone), written over a stale one.
    tombstones = {}
    for row in receipts:
        tombstone = row.tombstone(
            tombstone_retention=tombstone_retention, deletion_retention=deletion_retention
        )
        tombstones[tombstone.key] = tombstone
    fields = [Tombstone._meta.get_field(name) for name in ("key", "reason", "expires_at")]
    with connection.cursor() as cursor:
        cursor.executemany(
            purge.statement("tombstone_write"),
            [
                {
                    field.attname: field.get_db_prep_value(
                        getattr(tombstone, field.attname), connection
                    )
                    for field in fields
                }
                for tombstone in tombstones.values()
            ],
        )
    # No relation points at a receipt, so this is one DELETE, with no collection first.
    Receipt.objects.filter(id__in=[row.id for row in receipts]).delete()
    return len(tombstones)


# A tombstone row on SQLite: a 32-character key, a small integer, a timestamp, and the
# key again in the primary-key index, with page overhead; measured near 110 bytes.
TOMBSTONE_BYTES = 110


def tombstones_disk_size(count: int) -> tuple[int, str]:
    """Bytes the tombstone table and its indexes take, from the dbstat virtual table
    (it reads every page: the caller asks only up to its count's bound), else `count`
    rows at the estimate below when SQLite was built without dbstat."""
    table = Tombstone._meta.db_table
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT SUM(pgsize) FROM dbstat WHERE name = %s OR name IN "
                "(SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s)",
                [table, table],
            )
            return cursor.fetchone()[0] or 0, "dbstat"
    except DatabaseError:
        return count * TOMBSTONE_BYTES, "estimate"


def tombstones_planned() -> tuple[int, int | None, str] | None:
    """The row count the last ANALYZE wrote to `sqlite_stat1` for the tombstones (the
    first number of an index's `stat`), their size on disk estimated from it, and where
    they were read; None before the first ANALYZE (the caller says "more than").
    dbstat would read every page of the table (1.2 s at 200,000 tombstones): a size
    past the count's bound is estimated from the rows, as the count is."""
    table = Tombstone._meta.db_table
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = %s LIMIT 1", [table])
            row = cursor.fetchone()
    except DatabaseError:  # no sqlite_stat1 table: never analysed
        return None
    if row is None:
        return None
    rows = int(row[0].split()[0])
    return rows, rows * TOMBSTONE_BYTES, "sqlite_stat1"


def runs_need_a_lease() -> bool:
    """Rows are not locked one by one here, so one purge run at a time takes a lease."""
    return True
