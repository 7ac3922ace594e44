"""Public reads and the caller's own operation lookup (SPEC 5.2). Nothing here writes."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, F, Lookup, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from board.entries.cursors import decode_cursor, encode_cursor
from board.exceptions import NotFound
from board.models import Entry
from board.posting.callers import Caller
from board.services import POST_ENTRY
from receipts import engine
from receipts import services as receipts
from receipts.function_file import statement_file
from receipts.models import Receipt, Tombstone


def public_entries() -> QuerySet[Entry]:
    return Entry.objects.filter(visible=True, deleted_at__isnull=True)


def public_questions() -> QuerySet[Entry]:
    # Each question's replies counted by a subquery on `entry_replies_oldest`, for the
    # page's rows only: a join grouped by question made SQLite count every question's
    # replies before it took a page (5.5 s for the first page at a million entries).
    replies = (
        public_entries().filter(parent_id=OuterRef("pk")).order_by()
        .values("parent_id").annotate(n=Count("pk")).values("n")
    )
    return public_entries().filter(type=Entry.Type.QUESTION).annotate(
        reply_count=Coalesce(Subquery(replies), 0)
    )


@dataclass(frozen=True)
class Page:
    items: list[Entry]
    next_cursor: str | None


def thread_list(*, cursor: str | None, limit: int) -> Page:
    threads = public_questions().order_by("-id")
    if cursor:
        threads = threads.filter(id__lt=decode_cursor(cursor))
    return _page(threads, limit)


def thread_get(*, thread_id: int) -> Entry:
    thread = public_questions().filter(pk=thread_id).first()
    if thread is None:
        raise NotFound("no public question has this id")
    return thread


def reply_list(*, thread_id: int, cursor: str | None, limit: int) -> Page:
    thread_get(thread_id=thread_id)
    replies = public_entries().filter(parent_id=thread_id).order_by("id")
    if cursor:
        replies = replies.filter(id__gt=decode_cursor(cursor))
    return _page(replies, limit)


def _page(queryset: QuerySet[Entry], limit: int) -> Page:
    rows = list(queryset[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(items=rows, next_cursor=encode_cursor(rows[-1].pk) if more else None)


@dataclass(frozen=True)
class Operation:
    request_id: uuid.UUID
    status: str
    receipt: Receipt | None
    entry: Entry | None


def operation_get(*, caller: Caller, request_id: uuid.UUID, now: datetime) -> Operation:
    """What became of the caller's own request, without writing or spending an attempt."""
    identity = receipts.Identity(scope=caller.scope, operation=POST_ENTRY, request_id=request_id)
    receipt = receipts.receipt_lookup(identity=identity)
    if receipt is not None:
        if receipt.state == Receipt.State.DELETED:
            return Operation(request_id=request_id, status="deleted", receipt=receipt, entry=None)
        entry = Entry.objects.filter(pk=receipt.result_id).first()
        if now >= receipt.receipt_expires_at or entry is None:
            return Operation(request_id=request_id, status="expired", receipt=receipt, entry=None)
        return Operation(request_id=request_id, status="succeeded", receipt=receipt, entry=entry)
    tombstone = receipts.tombstone_lookup(identity=identity, now=now)
    if tombstone is None:
        raise NotFound("nothing is known of this request_id for this caller")
    status = "deleted" if tombstone.reason == Tombstone.Reason.DELETED else "expired"
    return Operation(request_id=request_id, status=status, receipt=None, entry=None)


# --- The console's search ----------------------------------------------------------------
# Searching entries' text through an index (SPEC 11.7): a case-insensitive substring of
# at least SEARCH_MIN characters in the title or the body, the meaning the console's search
# always had, without reading every row.
# 
# PostgreSQL: `ILIKE '%text%'` served by pg_trgm GIN indexes on title and body.
# SQLite: an FTS5 table with the trigram tokenizer, external content (the text is stored
# once, in board_entry), kept by triggers on board_entry; a phrase query of the text is a
# substring match. A deleted entry's text is blanked by an update, and the update trigger
# takes its old text out of the index, so deleted text is never found.

SEARCH_MIN = 3
# A search stops at the newest this many matches (SPEC 11.7 allows it): a common word
# then costs what a rare one does.
SEARCH_MATCHES_SHOWN = 1_000


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
    matching = engine.for_connection({"postgresql": _trigram_matching, "sqlite": _fts_matching})
    return matching(entries, text)


def _trigram_matching(entries: QuerySet, text: str) -> QuerySet:
    # pg_trgm's GIN indexes (entry_title_trigrams, entry_body_trigrams) serve ILIKE.
    pattern = Value(_like_pattern(text), output_field=TextField())
    return entries.filter(
        Q(_ContainsIgnoringCase(F("title"), pattern))
        | Q(_ContainsIgnoringCase(F("body"), pattern))
    )


def _fts_matching(entries: QuerySet, text: str) -> QuerySet:
    # FTS5's trigram table, kept by triggers on the entries (entries_matching.sql).
    found = RawSQL(statement_file("board/sql/sqlite/entries_matching.sql"), [_fts_phrase(text)])
    return entries.filter(id__in=found)
