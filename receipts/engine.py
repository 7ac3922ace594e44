"""Which engine the connection runs, asked in one place: every per-engine pair of
modules with the same functions (receipts/engines/, board/posting/engines/,
maintenance/tombstones/), and each pair of functions or expressions that differ by
engine elsewhere (maintenance/deliveries/outbox.py's new id,
moderation/access/throttling.py), is chosen here.
A module of its own that imports none of them."""

from collections.abc import Mapping
from typing import TypeVar

from django.db import connection

Choice = TypeVar("Choice")


def for_connection(modules: Mapping[str, Choice]) -> Choice:
    """One of `modules` ("postgresql", "sqlite") for the connection's engine: a module
    of statements, or one function each where that is all that differs."""
    return modules["postgresql" if connection.vendor == "postgresql" else "sqlite"]
