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
    written with the new entry (in the entry's own statement on PostgreSQL: the issue's
    budget allowed one `INSERT ... SELECT` more, and this makes it none). The send is
    rung for on commit; the doorbell publishes it with others' within milliseconds.

    A new post runs this, and nothing more of maintenance's unless it made deliveries
    (`made` is called only then): the schedule's first step is read once, and jittered
    only for a ring."""
    first_step = settings.SETTLE_DELIVERY_SCHEDULE[0]  # rules.schedule()'s first step

    def made(ids: list) -> None:
        ids = [uuid.UUID(str(value)) for value in ids]
        delay = rules.jittered(first_step)
        transaction.on_commit(lambda: doorbell.ring(ids, delay=delay))

    return _companion_for_engine()(now, first_step, made)


def _companion_in_statement(now: datetime, first_step, made) -> Companion:
    """PostgreSQL: the rows are written in the entry's own statement."""
    field = Delivery._meta.get_field
    return Companion(
        table=connection.ops.quote_name(Delivery._meta.db_table),
        columns=_OUTBOX_COLUMNS,
        link="entry_id",
        rows_sql=_outbox_rows_sql(),
        params=(
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


def _companion_after_statement(now: datetime, first_step, made) -> Companion:
    """SQLite: the rows are written by `_outbox_write`, right after the entry."""
    return Companion(made=made, write=functools.partial(_outbox_write, now=now))


@functools.cache
def _companion_for_engine():
    # Asked once per process: a post's trace stays in maintenance (no call into receipts).
    return engine.for_connection(
        {"postgresql": _companion_in_statement, "sqlite": _companion_after_statement}
    )


_OUTBOX_COLUMNS = (
    "id", "endpoint_id", "state", "attempts", "unanswered", "lookup_due", "note",
    "next_attempt_at", "deadline_at", "created_at",
)


@functools.cache
def _outbox_rows_sql() -> str:
    """PostgreSQL's outbox rows, written in the entry's own statement (`_outbox_write`
    writes the same rows in Python on SQLite)."""
    endpoints = connection.ops.quote_name(Endpoint._meta.db_table)
    return (
        f"SELECT gen_random_uuid(), id, %s, 0, %s, %s, '', %s, %s, %s "
        f"FROM {endpoints} WHERE enabled = %s"
    )


def _outbox_write(entry_id: int, now: datetime) -> list[uuid.UUID]:
    """SQLite's outbox rows, written through the ORM in the entry's transaction: one
    accepted delivery per enabled endpoint; their ids."""
    deliveries, ids = [], []
    for endpoint_id in Endpoint.objects.filter(enabled=True).values_list("id", flat=True):
        ids.append(uuid.uuid4())
        deliveries.append(Delivery(
            id=ids[-1], endpoint_id=endpoint_id, entry_id=entry_id, state=S.ACCEPTED,
            attempts=0, unanswered=False, lookup_due=False, note="",
            next_attempt_at=now + settings.SETTLE_DELIVERY_SCHEDULE[0],
            deadline_at=now + settings.SETTLE_DELIVERY_DEADLINE, created_at=now,
        ))
    if deliveries:
        Delivery.objects.bulk_create(deliveries)
    return ids


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
