"""Retention's side of the idempotency engine: receipts into tombstones, in batches
(purge.py), for the purges of maintenance/purges.py. What differs by engine is a
module each (postgresql.py, sqlite.py) with the same functions: `values_in`,
`results_not_held`, `entomb`, and for the retention page
and the purges' lease `tombstones_disk_size`, `tombstones_planned`, `runs_need_a_lease`;
chosen by receipts.engine; the statements are `.sql` files of sql/postgresql/ and
sql/sqlite/."""

from types import ModuleType

from maintenance.tombstones import postgresql, sqlite
from receipts import engine


def for_connection() -> ModuleType:
    return engine.for_connection(_MODULES)


_MODULES = {"postgresql": postgresql, "sqlite": sqlite}
