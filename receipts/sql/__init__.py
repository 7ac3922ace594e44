"""The idempotency engine's statements, one module per engine (postgresql.py,
sqlite.py), each with the same functions: `claim_sql`, `replay`, `create_effect`.

`for_connection` is the one place the write path chooses by engine; the board's own
statements (board/sql/) are chosen by it too.
"""

from collections.abc import Mapping
from types import ModuleType

from django.db import connection

from receipts.sql import postgresql, sqlite


def for_connection(modules: Mapping[str, ModuleType] | None = None) -> ModuleType:
    """The statements module of the connection's engine: the engine's own, or one of
    `modules` by vendor ("postgresql", "sqlite")."""
    modules = modules or _ENGINE
    return modules["postgresql" if connection.vendor == "postgresql" else "sqlite"]


_ENGINE = {"postgresql": postgresql, "sqlite": sqlite}
