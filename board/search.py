"""Searching entries' text through an index (SPEC 11.7): a case-insensitive substring of
at least SEARCH_MIN characters in the title or the body, the meaning the console's search
always had, without reading every row.

PostgreSQL: `ILIKE '%text%'` served by pg_trgm GIN indexes on title and body.
SQLite: an FTS5 table with the trigram tokenizer, external content (the text is stored
once, in board_entry), kept by triggers on board_entry; a phrase query of the text is a
substring match. A deleted entry's text is blanked by an update, and the update trigger
takes its old text out of the index, so deleted text is never found.
"""

from django.db import connection
from django.db.models import F, Lookup, Q, QuerySet, TextField, Value
from django.db.models.expressions import RawSQL

SEARCH_MIN = 3
# A search stops at the newest this many matches (SPEC 11.7 allows it): a common word
# then costs what a rare one does.
SEARCH_MATCHES_SHOWN = 1_000

SQLITE_SEARCH_TABLE = "board_entry_search"  # made by migration 0007


class _ContainsIgnoringCase(Lookup):
    """`column ILIKE %s`, the pattern made by `text_matching`; pg_trgm's GIN index serves
    it (Django's `icontains` writes `UPPER(column) LIKE UPPER(%s)`, which it does not)."""

    lookup_name = "settle_ilike"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} ILIKE {rhs}", [*lhs_params, *rhs_params]


def _like_pattern(text: str) -> str:
    # PostgreSQL's LIKE escapes with a backslash by default.
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _fts_phrase(text: str) -> str:
    # One FTS5 phrase: with the trigram tokenizer, the substring itself.
    return '"' + text.replace('"', '""') + '"'


def text_matching(entries: QuerySet, text: str) -> QuerySet:
    """`entries` whose title or body holds `text` (at least SEARCH_MIN characters),
    ignoring case, through the engine's index."""
    if connection.vendor == "postgresql":
        pattern = Value(_like_pattern(text), output_field=TextField())
        return entries.filter(
            Q(_ContainsIgnoringCase(F("title"), pattern))
            | Q(_ContainsIgnoringCase(F("body"), pattern))
        )
    if connection.vendor == "sqlite":
        found = RawSQL(
            f"SELECT rowid FROM {SQLITE_SEARCH_TABLE} WHERE {SQLITE_SEARCH_TABLE} MATCH %s",
            [_fts_phrase(text)],
        )
        return entries.filter(id__in=found)
    return entries.filter(Q(title__icontains=text) | Q(body__icontains=text))

