"""Every console list pages by keyset (SPEC 11.7, STYLE 12): a page is a position in a
fixed, unique, indexed ordering, never an offset, so the last page of fifty million rows
costs what the first does, and rows added meanwhile never shift what an operator saw.

The convention the lists share: no paging parameter is the newest page; `?after=<cursor>`
the rows older than the cursor, `?before=<cursor>` the rows newer than it, `?oldest=1`
the oldest page. A cursor is opaque (base64url of the key's values); one that does not
read gives the newest page and says so, never a 500. No page counts anything: it reads at
most one row more than it shows, and asks one indexed `LIMIT 1` whether the other side
has rows.
"""

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

# A cursor holds a few key values: a timestamp, a UUID, an id. Anything longer is not one
# of ours, and is refused before it is decoded (SPEC 11.6: no cost beyond the input's size).
CURSOR_LIMIT = 200


@dataclass(frozen=True)
class KeysetPage:
    rows: list
    # Cursors for the neighbours: `?before=newer` and `?after=older`; None at either end.
    newer: str | None
    older: str | None
    is_newest: bool
    is_oldest: bool
    # The cursor given did not read: this is the newest page instead.
    cursor_refused: bool = False

    def __iter__(self) -> Iterator:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def has_other_pages(self) -> bool:
        return not (self.is_newest and self.is_oldest)


def keyset_page(
    rows: QuerySet, *, key: tuple[str, ...], asked: Mapping[str, str], size: int
) -> KeysetPage:
    """The page of `rows` that `asked` (a query string) names, newest first by `key`.

    `key` is the list's ordering, descending on every field, its last field unique (an id)
    so ties are ordered too; an index whose order matches it makes every page a range scan.
    """
    after, before, refused = _cursor(rows, key, asked.get("after")), None, False
    if asked.get("after") and after is None:
        refused = True
    if not asked.get("after") and asked.get("before"):
        before = _cursor(rows, key, asked.get("before"))
        refused = before is None
    newest_first = rows.order_by(*(f"-{name}" for name in key))
    oldest_first = rows.order_by(*key)

    if after is not None:
        found = list(newest_first.filter(_beyond(key, after, older=True))[: size + 1])
        shown = found[:size]
        return _page(rows, key, shown, older_rows=len(found) > size, newer_rows=None)
    if before is not None:
        found = list(oldest_first.filter(_beyond(key, before, older=False))[: size + 1])
        shown = list(reversed(found[:size]))
        return _page(rows, key, shown, older_rows=None, newer_rows=len(found) > size)
    if asked.get("oldest") and not refused:
        found = list(oldest_first[: size + 1])
        shown = list(reversed(found[:size]))
        return _page(rows, key, shown, older_rows=False, newer_rows=len(found) > size)
    found = list(newest_first[: size + 1])
    return _page(
        rows, key, found[:size], older_rows=len(found) > size, newer_rows=False, refused=refused
    )


def _page(
    rows: QuerySet, key: tuple[str, ...], shown: list, *, older_rows: bool | None,
    newer_rows: bool | None, refused: bool = False,
) -> KeysetPage:
    if not shown:
        # Past either end (the rows a cursor named were purged meanwhile): offer the ends.
        return KeysetPage(rows=[], newer=None, older=None, is_newest=newer_rows is False,
                          is_oldest=older_rows is False, cursor_refused=refused)
    newest, oldest = _values(shown[0], key), _values(shown[-1], key)
    # The side this page was not read from: one indexed LIMIT 1 says whether it has rows.
    if older_rows is None:
        older_rows = rows.filter(_beyond(key, oldest, older=True)).exists()
    if newer_rows is None:
        newer_rows = rows.filter(_beyond(key, newest, older=False)).exists()
    return KeysetPage(
        rows=shown,
        newer=_encode(newest) if newer_rows else None,
        older=_encode(oldest) if older_rows else None,
        is_newest=not newer_rows,
        is_oldest=not older_rows,
        cursor_refused=refused,
    )


def _beyond(key: tuple[str, ...], values: tuple, *, older: bool) -> Q:
    """Rows strictly older (or newer) than `values` in the key's order.

    Written as `a <= x AND (a < x OR (a = x AND b < y))` rather than the OR alone: the
    leading bound is what lets the planner start its index range scan at the cursor
    instead of filtering every row from the end of the index to it.
    """
    strict, loose = ("lt", "lte") if older else ("gt", "gte")
    condition = Q(**{f"{key[-1]}__{strict}": values[-1]})
    for position in range(len(key) - 2, -1, -1):
        name, value = key[position], values[position]
        condition = Q(**{f"{name}__{strict}": value}) | (Q(**{name: value}) & condition)
    if len(key) > 1:
        condition = Q(**{f"{key[0]}__{loose}": values[0]}) & condition
    return condition


def _values(row, key: tuple[str, ...]) -> tuple:
    return tuple(getattr(row, name) for name in key)


def _encode(values: tuple) -> str:
    plain = [value.isoformat() if isinstance(value, datetime) else str(value) for value in values]
    text = json.dumps(plain, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


def _cursor(rows: QuerySet, key: tuple[str, ...], given: str | None) -> tuple | None:
    """The key values a cursor holds, each read by its model field; None if it does not read."""
    if not given or len(given) > CURSOR_LIMIT:
        return None
    try:
        plain = json.loads(base64.urlsafe_b64decode(given + "=" * (-len(given) % 4)))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(plain, list) or len(plain) != len(key):
        return None
    if not all(isinstance(value, str) for value in plain):
        return None
    fields = [rows.model._meta.get_field(name) for name in key]
    try:
        values = tuple(f.to_python(value) for f, value in zip(fields, plain, strict=True))
    except (ValidationError, ValueError, OverflowError):
        return None
    if any(value is None for value in values):
        return None
    if any(isinstance(value, datetime) and value.tzinfo is None for value in values):
        return None
    # An integer past what the column holds would be a database error, not a page.
    if any(isinstance(value, int) and not -(2**63) <= value < 2**63 for value in values):
        return None
    return values
