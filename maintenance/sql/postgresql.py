"""Maintenance's statements on PostgreSQL, chosen in maintenance/sql/__init__.py."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import connection

# A random (version 4) UUID made by PostgreSQL.
NEW_ID_SQL = "gen_random_uuid()"


@contextmanager
def run_lock(job: str, *, lease: timedelta) -> Iterator[bool]:
    """Always held: SKIP LOCKED splits the rows between concurrent runs."""
    yield True


def table_disk_size(table: str) -> tuple[int, str]:
    """Bytes `table` and its indexes take on disk, and how that was found."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size(%s::regclass)", [table])
        return cursor.fetchone()[0], "pg_total_relation_size"
