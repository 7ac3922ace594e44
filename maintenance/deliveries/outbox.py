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
from maintenance.deliveries.models import Delivery, Endpoint
from receipts import engine
from receipts.services import Companion

S = Delivery.State


# --- The outbox -------------------------------------------------------------------------


def outbox_companion(sender, *, now: datetime, **kwargs) -> Companion:
    """`board.entries.signals.entry_companions`: one accepted delivery per enabled endpoint,
    written with the new entry by the receipts engine, as data (`_outbox_rows_sql`): in
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

# A new delivery's id, a time-ordered (version 7) UUID: its first 48 bits the post's
# moment in milliseconds (a parameter), then the version, 74 random bits and the variant,
# in the form the engine keeps it: native on PostgreSQL (a random UUID's bytes with the
# moment laid over its first six and its version bits made 7); on SQLite the 32 hex
# digits Django's UUIDField stores. Ordered by time, the retention purge's batch of the
# oldest deliveries deletes neighbouring keys from the id's index and from the attempts'
# (delivery_id, started_at) index; random ids put each of a batch's deletions on a page
# of its own once an index outgrows the batch (SPEC 11.7: a purge batch costs the same at
# any size).
_NEW_ID = {
    "postgresql": (
        "encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing "
        "substring(int8send(CAST(%s AS bigint)) from 3) from 1 for 6), 52, 1), 53, 1), "
        "'hex')::uuid"
    ),
    "sqlite": (
        "lower(printf('%%012x', %s) || '7' || substr(hex(randomblob(2)), 2) "
        "|| substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(8)), 2))"
    ),
}


def _milliseconds(moment: datetime) -> int:
    """A version 7 UUID's time: milliseconds since the Unix epoch."""
    return int(moment.timestamp() * 1000)


@functools.cache
def _outbox_rows_sql() -> str:
    """The outbox's rows: an accepted delivery per enabled endpoint, one statement for
    both engines but for the new id's expression. Built once per process (a process
    serves one database)."""
    endpoints = connection.ops.quote_name(Endpoint._meta.db_table)
    return (
        f"SELECT {engine.for_connection(_NEW_ID)}, id, %s, 0, %s, %s, '', %s, %s, %s "
        f"FROM {endpoints} WHERE enabled = %s"
    )


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
