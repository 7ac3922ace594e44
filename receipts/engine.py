"""Which engine the connection runs, asked in one place: every per-engine pair of
modules with the same functions (receipts/engines/, board/posting/engines/,
maintenance/tombstones/) is chosen here. A module of its own that imports none of them."""

from collections.abc import Mapping
from types import ModuleType

from django.db import connection


def for_connection(modules: Mapping[str, ModuleType]) -> ModuleType:
    """One of `modules` ("postgresql", "sqlite") for the connection's engine."""
    return modules["postgresql" if connection.vendor == "postgresql" else "sqlite"]
