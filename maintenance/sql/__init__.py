"""Maintenance's statements, one module per engine (postgresql.py, sqlite.py) with the
same names: `run_lock` (how two purge runs share a job), `table_disk_size` (the retention
page's tombstone bytes), `NEW_ID_SQL` (an outbox delivery's id, made by the database).
Chosen where every engine's statements are (receipts.sql.for_connection)."""

from types import ModuleType

from maintenance.sql import postgresql, sqlite
from receipts import sql as engine_sql


def for_connection() -> ModuleType:
    return engine_sql.for_connection(_MODULES)


_MODULES = {"postgresql": postgresql, "sqlite": sqlite}
