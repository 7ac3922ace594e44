"""The idempotency engine's write and replay, one module per engine, each with the same
functions (`write`, `replay`): postgresql.py in SQL, two statements in one round trip;
sqlite.py in Python through the ORM. Chosen by receipts.engine, the one place every
per-engine module is chosen (the board's are in board/posting/engines/)."""

import functools
from types import ModuleType

from receipts import engine
from receipts.engines import postgresql, sqlite


@functools.cache
def for_connection() -> ModuleType:
    """The module of the connection's engine, chosen once: a process serves one database."""
    return engine.for_connection(_ENGINE)


_ENGINE = {"postgresql": postgresql, "sqlite": sqlite}
