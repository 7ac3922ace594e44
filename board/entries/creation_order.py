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
from django.db.models import QuerySet

from board.models import Entry
from receipts.function_file import statement_file

FIRST_ENTRY_SINCE_SQL = "board/sql/first_entry_since.sql"

# Ten times the longest a post's request may take (30 s) plus any clock skew NTP leaves
# between hosts; a clock stepped back by more than this is what it does not cover.
CREATION_ORDER_SLACK = timedelta(minutes=5)


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


def entries_created_within(since: datetime, until: datetime) -> QuerySet[Entry]:
    """The entries whose `created_at` is in [since, until], read by the primary key from
    the first entry `CREATION_ORDER_SLACK` before `since`: the work is the entries of that
    span and the slack's, whatever the board holds, and the answer exact while ids and
    creation times disagree by less than the slack."""
    first = first_entry_id_since(since - CREATION_ORDER_SLACK)
    if first is None:
        return Entry.objects.none()
    return Entry.objects.filter(id__gte=first, created_at__gte=since, created_at__lte=until)
