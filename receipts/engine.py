"""Which engine the connection runs, asked in one place: every per-engine pair of
modules with the same functions (receipts/engines/, receipts/purge_sql/,
board/posting/engines/) is chosen here.

A module of its own that imports none of them: the purge's statements are chosen from
receipts/purge.py, which receipts/statements.py (and so receipts/engines/) imports.
"""

from collections.abc import Mapping
from types import ModuleType

from django.db import connection


def for_connection(modules: Mapping[str, ModuleType]) -> ModuleType:
    """One of `modules` ("postgresql", "sqlite") for the connection's engine."""
    return modules["postgresql" if connection.vendor == "postgresql" else "sqlite"]
