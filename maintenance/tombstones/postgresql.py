"""The purge's engine functions on PostgreSQL, chosen in maintenance/tombstones/__init__.py;
its statements are in sql/postgresql/."""

from collections.abc import Collection
from datetime import timedelta

from django.db import connection

from maintenance.tombstones import purge
from receipts.models import Receipt, Tombstone

TOMBSTONES = Tombstone._meta.db_table


def values_in(name: str, values: list) -> tuple[dict[str, str], dict[str, object]]:
    """One array parameter: its text literal, cast in the statement."""
    return {}, {name: _array_literal(values)}


def _array_literal(values: Collection) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def results_not_held(params: dict, held: Collection) -> set[int]:
    """The results whose receipt another transaction holds, so SKIP LOCKED left it out
    of `held` (receipts_of_results_count.sql, then receipts_of_results.sql)."""
    with connection.cursor() as cursor:
        cursor.execute(purge.statement("receipts_of_results_count"), params)
        if cursor.fetchone()[0] == len(held):
            return set()
        cursor.execute(purge.statement("receipts_of_results"), params)
        held_ids = {row.id for row in held}
        return {result for id_, result in cursor.fetchall() if id_ not in held_ids}


def entomb(
    receipts: Collection, tombstone_retention: timedelta, deletion_retention: timedelta
) -> int:
    """One statement (entomb.sql): the receipts deleted, their tombstones made from
    what the DELETE returns."""
    with connection.cursor() as cursor:
        cursor.execute(
            purge.statement("entomb"),
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
