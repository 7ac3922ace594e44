"""The purge's statements (receipts/purge.py), one module per engine (postgresql.py,
sqlite.py) with the same functions: `sql_in`, `skip_locked`, `row_columns`,
`results_not_held`, `entomb`. Chosen by receipts.engine, where every engine's
statements are."""

from types import ModuleType

from receipts import engine
from receipts.purge_sql import postgresql, sqlite


def for_connection() -> ModuleType:
    return engine.for_connection(_MODULES)


_MODULES = {"postgresql": postgresql, "sqlite": sqlite}
