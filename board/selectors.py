"""Public reads and the caller's own operation lookup (SPEC 5.2). Nothing here writes."""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
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


# --- Entries by creation time ------------------------------------------------------------
# Read by the primary key, because ids grow with creation time: a post stamps its entry's
# `created_at` in Python when the request begins (board/services.py, `entry_post`) and
# draws its id at the claim, in the same request's write a moment later. So a span of time
# is a range of ids, and its ends are found by halving the ids
# (board/sql/first_entry_since.sql), about log2(ids) descents of the primary key, whatever
# the board holds (SPEC 11.7). No index on `created_at`: it cost every new post a btree
# leaf insert, 64 bytes of WAL (SPEC 12.1, docs/write-path.md).
#
# The two orders disagree when one request stamped its time before another's and drew its
# id after it (by a post's request at most: gunicorn ends it after 30 s), by the skew
# between the web hosts' clocks (milliseconds under NTP), after a host's clock stepped
# back, and on rows written with chosen times (a test's, an import's). A span therefore
# starts `CREATION_ORDER_SLACK` early, reads the 1,000 entries beyond each end for any
# whose time is inside it, and compares `created_at` exactly within what it reads.

FIRST_ENTRY_SINCE_SQL = "board/sql/first_entry_since.sql"

# Ten times the longest a post's request may take (30 s) plus any clock skew NTP leaves
# between hosts; a clock stepped back by more than this is what it does not cover.
CREATION_ORDER_SLACK = timedelta(minutes=5)

ENTRIES_NEWER_BELOW_SQL = "board/sql/entries_newer_below.sql"
ENTRIES_OLDER_FROM_SQL = "board/sql/entries_older_from.sql"
# Above every id (a bigint's largest): "below" it is from the newest entry down.
NO_ENTRY_ID = 2**63 - 1


def first_entry_id_since(moment: datetime) -> int | None:
    """The id of the first entry whose `created_at` is at or after `moment`, by halving
    the id range; None when every entry is older (or there is none). Exact while ids
    grow with creation time; see `CREATION_ORDER_SLACK` for readers that need it exact
    when they do not quite."""
    with connection.cursor() as cursor:
        cursor.execute(statement_file(FIRST_ENTRY_SINCE_SQL), {
            "moment": connection.ops.adapt_datetimefield_value(moment),
        })
        row = cursor.fetchone()
    return row[0] if row else None


def created_between(since: datetime | None, before: datetime | None = None) -> Q:
    """Entries created at or after `since` and before `before` (None: no bound): the
    ids from the first entry `CREATION_ORDER_SLACK` before `since` up to the first
    `CREATION_ORDER_SLACK` after `before`, each end widened over the 1,000 entries
    beyond it (the statements' `LIMIT`, about a millisecond of the primary key) that
    are inside the span (an entry written with a chosen time, a clock stepped back),
    and `created_at` compared exactly within them. The work is the span's entries, the
    slack's and the neighbours', whatever the board holds."""
    span = Q()
    if since is not None:
        first = first_entry_id_since(since - CREATION_ORDER_SLACK)
        below = NO_ENTRY_ID if first is None else first
        stepped_over = _neighbour(ENTRIES_NEWER_BELOW_SQL, below=below, moment=since)
        low = min(filter(None, (first, stepped_over)), default=None)
        if low is None:
            return Q(pk__in=[])
        span = Q(id__gte=low, created_at__gte=since)
    if before is None:
        return span
    past = first_entry_id_since(before + CREATION_ORDER_SLACK)
    if past is None:
        return span & Q(created_at__lt=before)
    stepped_over = _neighbour(ENTRIES_OLDER_FROM_SQL, start=past, moment=before)
    high = past if stepped_over is None else stepped_over + 1
    return span & Q(id__lt=high, created_at__lt=before)


def entries_created_within(since: datetime, until: datetime) -> QuerySet[Entry]:
    """The entries whose `created_at` is in [since, until] (`created_between`)."""
    return Entry.objects.filter(created_between(since), created_at__lte=until)


def _neighbour(statement: str, *, moment: datetime, **ends: int | None) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(statement_file(statement), {
            **ends,
            "moment": connection.ops.adapt_datetimefield_value(moment),
        })
        (found,) = cursor.fetchone()
    return found
