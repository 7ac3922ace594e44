"""Maintenance's statements on SQLite, chosen in maintenance/sql/__init__.py."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from maintenance.models import RunLock

# A random (version 4) UUID made by SQLite itself, which has no uuid function; stored as
# Django stores UUIDs there, 32 hex digits (`%%` because the statement has parameters).
NEW_ID_SQL = (
    "lower(hex(randomblob(4)) || hex(randomblob(2)) || '4' || substr(hex(randomblob(2)), 2)"
    " || substr('89ab', 1 + (abs(random()) %% 4), 1) || substr(hex(randomblob(2)), 2)"
    " || hex(randomblob(6)))"
)


@contextmanager
def run_lock(job: str, *, lease: timedelta) -> Iterator[bool]:
    """A lease on the job (`RunLock`): one run works, another returns at once (False)."""
    holder = uuid.uuid4()
    moment = timezone.now()  # wall clock, not the purge's `now`: a lease is real time
    # Read-then-write is safe here: on SQLite this transaction is BEGIN IMMEDIATE, so no
    # other run can take the lease between the read and the write.
    with transaction.atomic():
        current = RunLock.objects.filter(job=job).first()
        held = current is None or current.expires_at <= moment
        if held:
            RunLock.objects.update_or_create(
                job=job, defaults={"holder": holder, "expires_at": moment + lease}
            )
    try:
        yield held
    finally:
        if held:
            RunLock.objects.filter(job=job, holder=holder).delete()


def table_disk_size(table: str) -> tuple[int, str]:
    """Bytes `table` and its indexes take on disk, and how that was found; DatabaseError
    when SQLite was built without dbstat."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT SUM(pgsize) FROM dbstat WHERE name = %s OR name IN "
            "(SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s)",
            [table, table],
        )
        return cursor.fetchone()[0] or 0, "dbstat"
