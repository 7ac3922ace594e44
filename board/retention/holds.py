"""Holds (SPEC 8.2): an administrator keeps a thread, or every thread holding an entry of
a principal, from every purge, with a reason, until released with a reason.

A hold preserves; it changes nothing an agent is promised or shown: an expired receipt
still answers `410 expired`, a deleted entry still reads as deleted. The purges leave
held threads out in SQL (`thread_not_held_sql`, an anti-join read afresh each batch), and
`entry_delete` keeps a held entry's text and actor for administrators until the first
deletion purge after no hold covers it.
"""

from datetime import datetime

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce

from board.models import Entry, Hold, Principal

_ENTRIES = Entry._meta.db_table
_HOLDS = Hold._meta.db_table
# The longest reason the hold's column takes: longer ones are cut to it.
REASON_LIMIT = Hold._meta.get_field("reason").max_length


class HoldRefused(ValueError):
    """An unknown thread, principal or hold, or a missing reason: one line. The message is
    the command's (it names its flags); `console` says the same in the console's words."""

    def __init__(self, message: str, *, console: str | None = None) -> None:
        super().__init__(message)
        self.console = console or message


def thread_not_held_sql(thread: str) -> str:
    """SQL true when no active hold covers the thread whose question id is `thread` (an
    SQL expression): no hold on the thread, and no hold on a principal with an entry in
    it at this moment. Served by the partial indexes hold_active_thread and
    hold_active_principal, and the entries' (parent, id) index. Parenthesized, so that
    `NOT {...}` negates the whole of it: without, `NOT` bound to the first EXISTS only,
    and the deletion purge took a principal's hold for no hold.

    The principals' half starts from the active principal holds (a handful, often none)
    and only then looks for their entries in the thread: as a join, both engines read the
    thread's entries first, every one of them, for every row a purge batch checks."""
    return (
        f"(NOT EXISTS (SELECT 1 FROM {_HOLDS} h WHERE h.released_at IS NULL "
        f"AND h.thread_id = {thread}) "
        f"AND NOT EXISTS (SELECT 1 FROM {_HOLDS} h WHERE h.released_at IS NULL "
        f"AND h.principal_id IS NOT NULL AND EXISTS (SELECT 1 FROM {_ENTRIES} held "
        f"WHERE held.principal_id = h.principal_id "
        f"AND (held.id = {thread} OR held.parent_id = {thread}))))"
    )


def thread_is_held(thread_id: int) -> bool:
    """`thread_not_held_sql`'s rule for one thread, in the ORM: a hold on it, or on a
    principal with an entry in it."""
    principals_in_thread = Entry.objects.filter(
        Q(pk=thread_id) | Q(parent_id=thread_id)
    ).values("principal_id")
    return Hold.objects.filter(
        Q(thread_id=thread_id) | Q(principal_id__in=principals_in_thread),
        released_at__isnull=True,
    ).exists()


def entries_held(entry_ids: list[int]) -> set[int]:
    """Of these entries, the ids whose thread a hold covers now (one statement)."""
    if not entry_ids:
        return set()
    thread = f"COALESCE({_ENTRIES}.parent_id, {_ENTRIES}.id)"
    held = Entry.objects.filter(pk__in=entry_ids).extra(
        where=[f"NOT ({thread_not_held_sql(thread)})"]
    )
    return set(held.values_list("id", flat=True))


def holds_active():
    return Hold.objects.filter(released_at__isnull=True).select_related("principal", "thread")


def holds_on_thread(thread_id: int) -> list[Hold]:
    """The active holds that cover this thread now: on it, or on a principal in it."""
    principals = Entry.objects.filter(pk=thread_id).values("principal_id").union(
        Entry.objects.filter(parent_id=thread_id).values("principal_id")
    )
    ids = {row["principal_id"] for row in principals if row["principal_id"]}
    return [
        hold for hold in holds_active().order_by("id")
        if hold.thread_id == thread_id or hold.principal_id in ids
    ]


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise HoldRefused("a reason is required (--reason TEXT)", console="a reason is required")
    return reason[:REASON_LIMIT]


def hold_add(
    *, actor: str, reason: str, now: datetime, thread_id: int | None = None,
    principal: str | None = None,
) -> Hold:
    """Place a hold on a thread (a reply's id names its thread) or on a principal.

    The thread's question row is locked (FOR UPDATE) while the hold is written: a purge
    that holds the thread first makes this wait and then find it gone (refused); one that
    comes after sees the hold (the purge locks questions with SKIP LOCKED)."""
    reason = _reason(reason)
    if (thread_id is None) == (principal is None):
        raise HoldRefused(
            "give one of --thread ID or --principal NAME",
            console="give a thread id or a principal, one of the two",
        )
    with transaction.atomic():
        if thread_id is not None:
            entry = Entry.objects.filter(pk=thread_id).first()
            question = entry and (entry.parent_id or entry.pk)
            locked = Entry.objects.select_for_update().filter(
                pk=question, type=Entry.Type.QUESTION
            ).first() if question else None
            if locked is None:
                raise HoldRefused(f"thread {thread_id}: no such entry")
            return Hold.objects.create(
                thread_id=locked.pk, reason=reason, created_at=now, created_by=actor
            )
        found = Principal.objects.filter(name=principal).first()
        if found is None:
            raise HoldRefused(f"principal {principal!r}: unknown")
        return Hold.objects.create(
            principal=found, reason=reason, created_at=now, created_by=actor
        )


def hold_release(*, hold_id: int, actor: str, reason: str, now: datetime) -> Hold:
    """Release an active hold; the next purge treats what it covered as any other."""
    reason = _reason(reason)
    with transaction.atomic():
        hold = Hold.objects.select_for_update().filter(
            pk=hold_id, released_at__isnull=True
        ).first()
        if hold is None:
            raise HoldRefused(f"hold {hold_id}: no such active hold")
        hold.released_at = now
        hold.released_by = actor
        hold.release_reason = reason
        hold.save(update_fields=["released_at", "released_by", "release_reason"])
    return hold


# What the retention page counts of a hold, and shows: past the bound it says "more than"
# (SPEC 11.7: an agent's entries grow with the board).
COVERS_BOUND = 10_000
COVERS_SHOWN = 20


def hold_covers(hold: Hold) -> dict:
    """What a hold covers now: `{"threads": the first 20 thread ids, "thread_count": N,
    "entries": N, "more": bool}`, the entries those threads hold (their questions and
    every reply). A principal's hold reads at most `COVERS_BOUND` + 1 of its entries, by
    its index; past that, `more` is true and both numbers are "at least"."""
    if hold.thread_id is not None:
        own = Entry.objects.filter(pk=hold.thread_id).annotate(thread=F("id"))
    else:
        own = Entry.objects.filter(principal_id=hold.principal_id).annotate(
            thread=Coalesce("parent_id", "id")
        )
    found = list(own.values_list("thread", flat=True)[: COVERS_BOUND + 1])
    threads = sorted(set(found))
    if len(found) > COVERS_BOUND:
        return {"threads": threads[:COVERS_SHOWN], "thread_count": len(threads),
                "entries": COVERS_BOUND, "more": True}
    # Each thread's question, and their replies by the parent index: at most the bound's
    # ids in the list (an `OR` of two subqueries would be planned as a scan of entries).
    replies = Entry.objects.filter(parent_id__in=threads).values("pk")[: COVERS_BOUND + 1]
    counted = len(threads) + replies.count()
    return {"threads": threads[:COVERS_SHOWN], "thread_count": len(threads),
            "entries": min(counted, COVERS_BOUND), "more": counted > COVERS_BOUND}
