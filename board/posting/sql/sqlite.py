"""The board's write-path statements on SQLite, chosen in board/posting/sql/__init__.py. Its
write transactions already exclude each other, so nothing here locks rows."""

from board.models import Entry
from board.posting.sql.common import (
    ADMITTED_COLUMNS,
    COUNTED_WITHIN,
    COUNTERS,
    QUESTION_RECEIPT_LIVE_SQL,
    Admission,
    caller_sql,
)
from board.posting.writer_turn import turn_take, writer_turn  # noqa: F401  (the writers' turn)


def admit_count(cursor, asked: Admission) -> tuple[tuple, list[str]]:
    """The admission in two statements (SQLite cannot return what an INSERT did not
    write, and its round trips cost no network): the caller read, then, with the
    post's writer turn taken, one upsert of the counters it asks for. The row
    (ADMITTED_COLUMNS, source_limit, overall_limit, admitted) and the sources counted."""
    caller_cte, caller_params = caller_sql(asked)
    cursor.execute(
        f"WITH {caller_cte} SELECT {ADMITTED_COLUMNS}, source_limit, overall_limit, admitted "
        f"FROM caller",
        caller_params,
    )
    row = cursor.fetchone()
    turn_take()  # the caller is read: the post's writes begin here
    source, source_limit, overall_limit, admitted = row[12:16]
    # What to count: the source, and the overall counter for an admitted caller without
    # a committed receipt; a limit of 0 counts nothing.
    wanted = []
    if source_limit > 0:
        wanted.append((source, int(source_limit)))
    if admitted and not row[11] and overall_limit > 0:
        wanted.append((asked.overall, int(overall_limit)))
    if not wanted:
        return row, []
    names, cases = [], ""
    for name, limit in wanted:
        names.append(name)
        cases += f"WHEN %s THEN {limit} "
    # `WHERE true`: SQLite's parser needs it before ON CONFLICT after a SELECT.
    cursor.execute(
        f"INSERT INTO {COUNTERS} AS c (source, hour, count) "
        f"SELECT column1, %s, 1 FROM (VALUES {', '.join(['(%s)'] * len(names))}) "
        f"WHERE true {COUNTED_WITHIN.format(limit=f'CASE c.source {cases}END')} "
        f"RETURNING source",
        [asked.hour, *names, *names],
    )
    counted = []
    for (name,) in cursor.fetchall():
        counted.append(name)
    return row, counted


# Step 6 as the write's guard (receipts.services.Guard): a reply's parent is a public
# question whose receipt has not expired. SQLite's write transaction already holds it.
QUESTION_OPEN_SQL = (
    f"EXISTS (SELECT 1 FROM {Entry._meta.db_table} WHERE id = %s AND type = %s "
    f"AND visible AND deleted_at IS NULL) AND {QUESTION_RECEIPT_LIVE_SQL}"
)


def live_entries_locked(live):
    return live
