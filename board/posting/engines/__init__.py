"""The board's write path, one module per engine (postgresql.py: SQL; sqlite.py: Python
through the ORM) with the same functions, chosen by receipts.engine."""

import functools
from types import ModuleType

from board.posting.engines import postgresql, sqlite
from receipts import engine


@functools.cache
def for_connection() -> ModuleType:
    """The module of the connection's engine, chosen once: a process serves one database."""
    return engine.for_connection(_MODULES)


_MODULES = {"postgresql": postgresql, "sqlite": sqlite}
