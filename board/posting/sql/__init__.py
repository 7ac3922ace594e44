"""The board's write-path statements, one module per engine (postgresql.py, sqlite.py)
with the same functions, chosen where the engine's are (receipts.sql.for_connection)."""

import functools
from types import ModuleType

from board.posting.sql import postgresql, sqlite
from receipts import sql as engine_sql


@functools.cache
def for_connection() -> ModuleType:
    """The module of the connection's engine, chosen once: a process serves one database."""
    return engine_sql.for_connection(_MODULES)


_MODULES = {"postgresql": postgresql, "sqlite": sqlite}
