"""The outbox: one `accepted` delivery per enabled endpoint, written in the new entry's
own transaction; and the cancel rule applied in the transaction that deletes entries.
Both are receivers of board's signals (`board/entries/signals.py`), connected in
`maintenance/apps.py`, so board never imports maintenance.
"""

import functools
import uuid
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction

from board.models import Entry
from maintenance.deliveries import rules
from maintenance.deliveries.doorbell import doorbell
from maintenance.deliveries.models import Delivery
from receipts import engine
from receipts.function_file import statement_file
from receipts.services import Companion

S = Delivery.State


# --- The outbox -------------------------------------------------------------------------


def outbox_companion(sender, *, now: datetime, **kwargs) -> Companion:
    """`board.entries.signals.entry_companions`: one accepted delivery per enabled endpoint,
    written with the new entry by the receipts engine, as data (outbox_rows.sql): in
    the entry's own statement on PostgreSQL (the issue's budget allowed one `INSERT ...
    SELECT` more, and this makes it none), right after it in its transaction on SQLite.
    The send is rung for on commit; the doorbell publishes it with others' within
    milliseconds.

    A new post runs this, and nothing more of maintenance's unless it made deliveries
    (`made` is called only then): the schedule's first step is read once, and jittered
    only for a ring."""
    first_step = settings.SETTLE_DELIVERY_SCHEDULE[0]  # rules.schedule()'s first step

    def made(ids: list) -> None:
        ids = [uuid.UUID(str(value)) for value in ids]
        delay = rules.jittered(first_step)
        transaction.on_commit(lambda: doorbell.ring(ids, delay=delay))

    field = Delivery._meta.get_field
    return Companion(
        table=connection.ops.quote_name(Delivery._meta.db_table),
        columns=_OUTBOX_COLUMNS,
        link="entry_id",
        rows_sql=_outbox_rows_sql(),
        params=(
            _milliseconds(now),
            S.ACCEPTED.value,
            False,
            False,
            field("next_attempt_at").get_db_prep_save(now + first_step, connection),
            field("deadline_at").get_db_prep_save(
                now + settings.SETTLE_DELIVERY_DEADLINE, connection
            ),
            field("created_at").get_db_prep_save(now, connection),
            True,
        ),
        returning="id",
        made=made,
    )


_OUTBOX_COLUMNS = (
    "id", "endpoint_id", "state", "attempts", "unanswered", "lookup_due", "note",
    "next_attempt_at", "deadline_at", "created_at",
)

# The outbox's rows: an accepted delivery per enabled endpoint, a statement each engine
# (they differ in the new id's expression).
_OUTBOX_ROWS = {
    "postgresql": "maintenance/deliveries/sql/postgresql/outbox_rows.sql",
    "sqlite": "maintenance/deliveries/sql/sqlite/outbox_rows.sql",
}


@functools.cache
def _outbox_rows_sql() -> str:
    """The engine's statement, chosen once a process (a process serves one database): a
    post then calls nothing of the receipts app from here."""
    return statement_file(engine.for_connection(_OUTBOX_ROWS))


def _milliseconds(moment: datetime) -> int:
    """A version 7 UUID's time (outbox_rows.sql): milliseconds since the Unix epoch."""
    return int(moment.timestamp() * 1000)


def on_entry_deleted(sender, *, entry: Entry, now: datetime, **kwargs) -> None:
    """`board.entries.signals.entry_deleted`: the cancel rule, in the deletion's transaction."""
    deliveries_cancel_for_entry(entry_id=entry.pk, now=now, note="entry deleted")


def on_entries_deleted(sender, *, entry_ids: list[int], now: datetime, **kwargs) -> None:
    """`board.entries.signals.entries_deleted`: the cancel rule for a batch, in its transaction."""
    deliveries_cancel_for_entries(entry_ids=entry_ids, now=now, note="entry deleted")


def deliveries_cancel_for_entry(*, entry_id: int, now: datetime, note: str) -> int:
    """Apply the cancel rule to an entry's accepted and running deliveries."""
    return deliveries_cancel_for_entries(entry_ids=[entry_id], now=now, note=note)


def deliveries_cancel_for_entries(*, entry_ids: list[int], now: datetime, note: str) -> int:
    """Apply the cancel rule to these entries' accepted and running deliveries."""
    return Delivery.objects.filter(entry_id__in=entry_ids).cancel(now=now, note=note)
