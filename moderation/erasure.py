"""Erasing a principal's entries (SPEC 8.4): every entry of one agent, each deleted as one
operator delete, in batches, resumable, with one record of progress.

Design note
-----------
* **One record of progress.** `erasure_start` writes an `Erasure` (running) covering
  the entries fixed by `up_to_id` (the newest entry id at the start) and `since`; a
  partial unique index allows one running erasure per principal. A second start while
  one runs gets that record back and joins it.
* **Counted where the cost belongs** (SPEC 11.7). A start counts the live entries up to
  the console's bound (`moderation.selectors.COUNT_BOUND`), so the console's request
  costs the same for a principal with a million entries. Within the bound the count is
  exact, and the start writes the total and its audit event at once. Past it the record's
  total stays empty ("being counted") and the runner counts exactly before its first
  batch, then writes the total and the start's audit event: a job that deletes every
  entry may also count them. The confirmation page counts with the same bound.
* **Batches.** `erasure_run` deletes up to `batch_size` live entries per transaction
  through `board.services.entries_delete` (the operator delete's rule, a statement for
  the whole batch: text and actor gone unless held, receipts `deleted`, accepted
  deliveries cancelled), and adds the batch's counts to the record in the same
  transaction. A runner walks forward by id (keyset), so a batch never rereads the
  rows the batches before it deleted. A crash loses at most the open batch, and then both
  the entries and the counts roll back together: the next run (the Celery message
  delivered again, `erasures_resume`, or a second start) takes up the live entries left.
  Two runners on one erasure are safe: rows are locked (`FOR UPDATE` on PostgreSQL, the
  write transaction on SQLite) and a row another runner deleted no longer matches.
* **Short transactions** keep the write path answering: a batch holds the writer turn
  (SQLite) or its rows (PostgreSQL) for a few milliseconds; other principals' posts go on.
* **Audit**: one event when it starts (name, reason, total, since, tokens revoked: the
  request's, or the runner's once it counted), one when it ends (the counts); the
  per-entry deletes are not audited one by one.
"""

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from board import services as board
from board.models import Entry, Principal
from board.posting import engines as board_engines
from moderation.actions import _require_reason, audit_record, token_revoke
from moderation.models import Erasure
from moderation.selectors import bounded_count
from receipts.faults import sqlstate

ERASE_BATCH_SIZE = 200


class ErasureRefused(ValueError):
    """An erase that cannot start: no reason, an unknown principal."""


@dataclass(frozen=True)
class ErasureCounts:
    """`total` is a `moderation.selectors.Bounded` when counted up to the bound; past it,
    `questions` and `replies` are None (not split)."""

    total: int
    questions: int | None
    replies: int | None


def _principal(name: str) -> Principal:
    principal = Principal.objects.filter(name=name).first()
    if principal is None:
        raise ErasureRefused(f"no agent is named {name!r}")
    return principal


def _live_entries(
    principal_id: int, *, since: datetime | None, up_to_id: int | None = None
) -> QuerySet:
    entries = Entry.objects.filter(principal_id=principal_id, deleted_at__isnull=True)
    if since is not None:
        entries = entries.filter(created_at__gte=since)
    if up_to_id is not None:
        entries = entries.filter(id__lte=up_to_id)
    return entries


def _counted(entries: QuerySet, *, bounded: bool = False) -> ErasureCounts:
    """Exactly; or, `bounded`, reading at most the console's bound + 1 live entries first,
    and splitting them into questions and replies only when that total was exact."""
    if bounded:
        # Newest first: an agent erased for a flood has posted the newest entries, which
        # PostgreSQL then finds by walking the primary key back from the newest (warm in
        # memory), where without an order it chose a sequential scan from the oldest
        # pages (at 5,000,000 entries, one agent with a quarter of them: 9.6 ms against
        # 4.5 ms, and all the older entries read first for a flood's newest ones).
        total = bounded_count(entries.order_by("-id"))
        if total.exceeded:
            return ErasureCounts(total=total, questions=None, replies=None)
    questions = entries.filter(type=Entry.Type.QUESTION).count()
    replies = entries.filter(type=Entry.Type.REPLY).count()
    return ErasureCounts(total=questions + replies, questions=questions, replies=replies)


def erasure_preview(
    *, name: str, since: datetime | None = None, bounded: bool = False
) -> ErasureCounts:
    """What an erase of NAME's entries (since `since`) would delete now; changes nothing.
    Exact (`erase --dry-run`), or `bounded` as a console page counts (SPEC 11.7)."""
    return _counted(_live_entries(_principal(name).pk, since=since), bounded=bounded)


def erasure_start(
    *,
    actor: str,
    name: str,
    reason: str,
    since: datetime | None = None,
    revoke_tokens: bool = False,
    now: datetime | None = None,
) -> tuple[Erasure, bool]:
    """Record an erasure of NAME's entries and audit its start; with `revoke_tokens`, its
    tokens are revoked in the same transaction. Past the console's count bound the total
    is left empty, and the start's audit event to the runner that counts it (the design
    note says why). Returns the record and whether it is new:
    while one runs for NAME, that one is returned and no second start is audited, but
    `revoke_tokens` is still honoured (audited as `token_revoke`): an operator who joins
    an erasure to stop a leaked token must not find the token still working."""
    try:
        reason = _require_reason(reason)
    except ValueError as error:
        raise ErasureRefused(str(error)) from None
    principal = _principal(name)
    now = now or timezone.now()
    try:
        with transaction.atomic():
            running = Erasure.objects.filter(
                principal=principal, state=Erasure.State.RUNNING
            ).first()
            if running is not None:
                if revoke_tokens:
                    token_revoke(actor=actor, name=name, reason=reason)
                return running, False
            newest = Entry.objects.order_by("-id").values_list("id", flat=True).first() or 0
            counted = _counted(
                _live_entries(principal.pk, since=since, up_to_id=newest), bounded=True
            )
            exact = counted.questions is not None
            revoked = board.token_revoke(name=name, now=now) if revoke_tokens else 0
            erasure = Erasure.objects.create(
                principal=principal, actor=actor, reason=reason, since=since,
                revoke_tokens=revoke_tokens, tokens_revoked=revoked, up_to_id=newest,
                total=counted.total if exact else None, started_at=now, updated_at=now,
            )
            if exact:
                _start_audited(erasure, now=now)
    except IntegrityError:
        # Another start committed between our read and our insert (PostgreSQL): join it.
        running = Erasure.objects.get(principal=principal, state=Erasure.State.RUNNING)
        if revoke_tokens:
            token_revoke(actor=actor, name=name, reason=reason)
        return running, False
    return erasure, True


def _start_audited(erasure: Erasure, *, now: datetime) -> None:
    audit_record(
        actor=erasure.actor, action="erase_start", target_type="principal",
        target_ids=[erasure.principal_id], reason=erasure.reason, now=now,
        details={
            "name": erasure.principal.name, "erasure": erasure.pk, "total": erasure.total,
            "since": erasure.since.isoformat() if erasure.since else None,
            "tokens_revoked": erasure.tokens_revoked,
        },
    )


def _total_counted(erasure: Erasure) -> None:
    """Count exactly the entries of an erasure whose start passed the bound, before its
    first batch, and write its total and the start's audit event. Conditional: of two
    runners that both counted, one writes them."""
    counted = _counted(
        _live_entries(erasure.principal_id, since=erasure.since, up_to_id=erasure.up_to_id)
    )
    now = timezone.now()
    with transaction.atomic():
        changed = Erasure.objects.filter(pk=erasure.pk, total__isnull=True).update(
            total=counted.total, updated_at=now
        )
        if changed:
            erasure.refresh_from_db()
            _start_audited(erasure, now=now)


DEADLOCK = "40P01"  # PostgreSQL's deadlock_detected


def erasure_run(
    *,
    erasure_id: int,
    batch_size: int = ERASE_BATCH_SIZE,
    time_budget: timedelta | None = None,
) -> Erasure:
    """Delete the erasure's live entries batch by batch, then mark it finished and audit
    its end. Safe to call again after a crash, or while another call runs it. With a
    `time_budget`, returns when it is spent, the erasure still running (the Celery task
    then queues itself again: a task must end within its time limit)."""
    deadline = time.monotonic() + time_budget.total_seconds() if time_budget else None
    erasure = Erasure.objects.get(pk=erasure_id)
    if erasure.state == Erasure.State.RUNNING and erasure.total is None:
        _total_counted(erasure)
    after = 0
    while erasure.state == Erasure.State.RUNNING:
        try:
            last = _batch(erasure, batch_size, after)
        except OperationalError as error:
            if sqlstate(error) != DEADLOCK:
                raise
            # Two runners of one erasure locked rows each other's batch then wanted
            # (PostgreSQL re-checks a row it waited for and may hold it although it no
            # longer matches). PostgreSQL rolled one batch back whole: it deleted
            # nothing, so it runs again.
            continue
        if last is None:
            _finish(erasure)
        else:
            after = last
        erasure.refresh_from_db()
        if deadline is not None and time.monotonic() >= deadline:
            break
    return erasure


def _batch(erasure: Erasure, batch_size: int, after: int) -> int | None:
    """One transaction: delete up to `batch_size` entries with ids above `after` and count
    them on the record. Returns the last id it deleted, or None when none was left.

    `after` is where this runner's previous batch ended: every entry of the erasure up to
    it is deleted (the rows were locked, not skipped), so the next batch starts there
    instead of walking past the deleted rows again, which made each batch slower than
    the one before. A runner that starts afresh (after a crash) starts from 0.
    """
    # On SQLite the batch takes the write path's turn (board.posting.writer_turn) like a post:
    # otherwise back-to-back batches kept SQLite's lock while a waiting post slept in its
    # busy handler, and posts were answered a few a second during an erase. PostgreSQL
    # has no turns: the batch locks its rows.
    engine = board_engines.for_connection()
    with engine.writer_turn():
        engine.turn_take()  # before the transaction: a post holding the turn may be waiting
        with transaction.atomic():
            due = _live_entries(
                erasure.principal_id, since=erasure.since, up_to_id=erasure.up_to_id
            ).filter(id__gt=after).order_by("id")
            # PostgreSQL waits for a row another runner holds, then drops it if that one
            # deleted it.
            due = engine.live_entries_locked(due)
            rows = list(due.values_list("id", flat=True)[:batch_size])
            if not rows:
                return None
            now = timezone.now()
            deleted = board.entries_delete(entry_ids=rows, now=now)
            questions, replies = deleted["questions"], deleted["replies"]
            Erasure.objects.filter(pk=erasure.pk).update(
                done=F("done") + questions + replies,
                questions=F("questions") + questions,
                replies=F("replies") + replies,
                updated_at=now,
            )
            return rows[-1]


def _finish(erasure: Erasure) -> None:
    now = timezone.now()
    with transaction.atomic():
        # Conditional: of two runners that both found nothing left, one audits the end.
        changed = Erasure.objects.filter(pk=erasure.pk, state=Erasure.State.RUNNING).update(
            state=Erasure.State.FINISHED, finished_at=now, updated_at=now
        )
        if not changed:
            return
        erasure.refresh_from_db()
        audit_record(
            actor=erasure.actor, action="erase_end", target_type="principal",
            target_ids=[erasure.principal_id], reason=erasure.reason, now=now,
            details={
                "name": erasure.principal.name, "erasure": erasure.pk, "done": erasure.done,
                "questions": erasure.questions, "replies": erasure.replies,
            },
        )


def principal_erase(
    *,
    actor: str,
    name: str,
    reason: str,
    since: datetime | None = None,
    revoke_tokens: bool = False,
    batch_size: int = ERASE_BATCH_SIZE,
) -> Erasure:
    """Start (or join) an erasure of NAME's entries and run it to the end in this process
    (the `erase` command)."""
    erasure, _ = erasure_start(
        actor=actor, name=name, reason=reason, since=since, revoke_tokens=revoke_tokens
    )
    return erasure_run(erasure_id=erasure.pk, batch_size=batch_size)


def erasures_stale(*, now: datetime | None = None) -> list[int]:
    """Running erasures whose last batch is older than SETTLE_ERASE_STALE_AFTER: their
    runner died (a worker killed), and `erasures_resume` hands them to a worker again."""
    moment = (now or timezone.now()) - settings.SETTLE_ERASE_STALE_AFTER
    return list(
        Erasure.objects.filter(state=Erasure.State.RUNNING, updated_at__lt=moment)
        .values_list("id", flat=True)
    )
