"""The idempotency engine's statements, one module per engine (postgresql.py,
sqlite.py), each with the same functions: `claim_sql`, `replay`, `write`.

`for_connection` is where the write path chooses by engine (by receipts.engine, the
one place every set of per-engine statements is chosen); the board's own statements
(board/posting/sql/) are chosen through it too.
"""

from collections.abc import Mapping
from types import ModuleType

from receipts import engine
from receipts.sql import postgresql, sqlite


def for_connection(modules: Mapping[str, ModuleType] | None = None) -> ModuleType:
    """The statements module of the connection's engine: the engine's own, or one of
    `modules` by vendor ("postgresql", "sqlite")."""
    return engine.for_connection(modules or _ENGINE)


_ENGINE = {"postgresql": postgresql, "sqlite": sqlite}
