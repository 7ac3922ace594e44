"""The board's write-path statements on SQLite, chosen in board/sql/__init__.py. Its
write transactions already exclude each other, so nothing here locks rows."""

from board.models import Entry
from board.sql.common import ADMITTED_COLUMNS, COUNTERS, counted_within
from board.writer_turn import turn_take, writer_turn  # noqa: F401  (the writers' turn)


def admit_count(cursor, caller_cte: str, caller_params: list, hour, overall: str):
    """The admission in two statements (SQLite cannot return what an INSERT did not
    write, and its round trips cost no network): the caller read, then, with the
    post's writer turn taken, one upsert of the counters it asks for."""
    cursor.execute(
        f"WITH {caller_cte} SELECT {ADMITTED_COLUMNS}, source_limit, overall_limit, admitted "
        f"FROM caller",
        caller_params,
    )
    row = cursor.fetchone()
    turn_take()  # the caller is read: the post's writes begin here
    source, source_limit, overall_limit, admitted = row[11:15]
    wanted = [(source, source_limit)]
    if admitted and not row[10]:
        wanted.append((overall, overall_limit))
    wanted = [(name, int(limit)) for name, limit in wanted if limit > 0]
    if not wanted:
        return row, []
    names = [name for name, _ in wanted]
    limit_case = "CASE c.source " + " ".join(f"WHEN %s THEN {limit}" for _, limit in wanted)
    # `WHERE true`: SQLite's parser needs it before ON CONFLICT after a SELECT.
    cursor.execute(
        f"INSERT INTO {COUNTERS} AS c (source, hour, count) "
        f"SELECT column1, %s, 1 FROM (VALUES {', '.join(['(%s)'] * len(wanted))}) "
        f"WHERE true {counted_within(limit_case + ' END')} RETURNING source",
        [hour, *names, *names],
    )
    return row, [found[0] for found in cursor.fetchall()]


def question_public_locked(question_id: int) -> bool:
    """Whether the question is public; SQLite's write transaction already holds it."""
    return Entry.objects.filter(
        pk=question_id, type=Entry.Type.QUESTION, visible=True, deleted_at__isnull=True
    ).exists()


def live_entries_locked(live):
    return live
