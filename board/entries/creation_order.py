"""Entries by creation time, read by the primary key: ids grow with creation time.

A post stamps its entry's `created_at` in Python when the request begins
(board/services.py, `entry_post`) and takes its id in the same request's write, a moment
later (PostgreSQL: from the sequence, at the claim; SQLite: at the insert, one writer at
a time). So ids and creation times keep one order, and a span of
time is a range of ids: the first entry at or after a moment is found by halving the id
range (board/sql/first_entry_since.sql), about log2(ids) descents of the primary key,
each a few pages, whatever the board holds (SPEC 11.7). That is why there is no index on
`created_at`: it cost every new post a btree leaf insert, 64 bytes of WAL (SPEC 12.1,
docs/write-path.md).

The two orders disagree only when one request stamped its time before another's and
took its id after it: by the length of a post's request (gunicorn ends a worker's
request after 30 s, deploy/gunicorn.conf.py), by the skew between the web hosts' clocks
(milliseconds under NTP), or by a step of a host's clock. A reader that must count a
span's entries exactly starts from the first id of `CREATION_ORDER_SLACK` before the span
and filters `created_at` within the ids it reads: exact while the disagreement stays
under the slack, and the price is reading that much more traffic.
"""

from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Q, QuerySet

from board.models import Entry
from receipts.function_file import statement_file

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
