"""Retention: purges that remove what is past its time and leave compact tombstones.

Design note
-----------
A receipt promises that a retry replays, for `SETTLE_ENTRY_RETENTION`. After that the
write path already answers `410 expired` from `receipt_expires_at` alone; the purge only
takes the rows away, and must never turn an expired id back into a fresh one. So:

* **A thread goes as one unit.** A question and its replies are removed together once
  every receipt in the thread has expired (a deleted entry's receipt counts from its
  deletion: `deleted_at` plus the `deletion` policy in force at this purge, the rule
  the deletion purge follows). A reply younger than its question keeps the whole thread.
* **Tombstones in the same transaction.** Entries and receipts are deleted and one
  tombstone per receipt is written (16-byte identity digest, reason, expiry) in one
  transaction. A retry claims its identity and checks tombstones inside its own
  transaction (receipts.services), so whichever commits first, the retry sees the
  receipt or the tombstone, and answers `410`, never a second `201`.
* **Serialize on the identity.** On PostgreSQL the purge locks the receipts it removes
  (`FOR UPDATE SKIP LOCKED`) and the question row that stands for the thread; a retry
  touching a receipt locks that row too, so one waits for the other, or the purge skips
  the thread this time. On SQLite every write transaction is `BEGIN IMMEDIATE`, which
  serializes the purge and the claim outright.
* **Bounded and resumable.** Work goes in batches of `batch_size` rows, one short
  transaction each; a run walks forward (keyset on expiry, id) and stops when a batch
  comes back short or the time budget is spent; the next run resumes where the rows
  still are. Nothing is remembered between runs except the data itself. The loop is
  `maintenance.batches.run_batches`; a forecast passes `enough` to stop it at a bound.
* **Two runs at once.** On PostgreSQL, SKIP LOCKED splits the rows between them, so
  their counts add up and neither waits on the other. On SQLite a run lease
  (`RunLock`) lets one run work while the other returns at once with nothing done.

Receipt-level steps (find, lock, entomb) live in `maintenance/tombstones/purge.py` (re-exported by
`receipts.services`), which knows nothing of threads; the thread rules live here. Each
job is also a Celery task (`maintenance.tasks`), which records a `MaintenanceRun`; the
functions here are called directly by tests, the `purge` command and the tasks alike.
"""

import logging
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Exists, OuterRef
from django.utils import timezone

from board.models import Entry, HourlyCounter
from board.retention import policies as retention
from board.retention.holds import thread_not_held_sql
from board.services import entries_text_blank
from board.serving import replicas
from maintenance.batches import Batch, PurgeResult, purge_time_budget, run_batches
from maintenance.models import MaintenanceRun
from maintenance.tombstones import purge as receipt_purge
from receipts.faults import sqlstate

log = logging.getLogger(__name__)

POST_ENTRY = "post_entry:v1"


# --- Expired threads --------------------------------------------------------------------

THREAD_KEYS = ["threads", "entries", "receipts", "tombstones"]


def purge_expired_threads(
    *,
    now: datetime,
    batch_size: int,
    time_budget: timedelta | None = None,
    dry_run: bool = False,
    enough: Callable[[dict[str, int]], bool] | None = None,
) -> PurgeResult:
    """Remove every thread whose receipts have all expired at `now`, leaving tombstones."""
    tombstone = retention.policy_in_force(retention.TOMBSTONE, fresh=True).duration
    deletion = retention.policy_in_force(retention.DELETION, fresh=True).duration
    result = run_batches(
        job="purge-expired-threads",
        keys=THREAD_KEYS,
        batch=lambda after: _threads_batch(
            now=now, limit=batch_size, after=after,
            tombstone_retention=tombstone, deletion_retention=deletion,
        ),
        time_budget=purge_time_budget(time_budget),
        dry_run=dry_run,
        enough=enough,
    )
    if any(result.counts.values()) and not dry_run:
        replicas.visibility_changed()
    return result


def _threads_batch(
    *,
    now: datetime,
    limit: int,
    after,
    tombstone_retention: timedelta,
    deletion_retention: timedelta,
) -> Batch:
    # Not locked yet: the thread, not the receipt, is the unit two runs split. Locking
    # receipts here could leave a question's receipt to one run and its reply's to the
    # other, and both would have to skip the thread.
    due = receipt_purge.receipts_due(
        operation=POST_ENTRY, now=now, limit=limit, after=after,
        deleted_before=now - deletion_retention,
    )
    if not due:
        return Batch(counts=dict.fromkeys(THREAD_KEYS, 0), more=False, after=after)
    next_after = (due[-1].receipt_expires_at, due[-1].id)

    parents = dict(_entry_rows("entries_parents", [row.result_id for row in due]))
    # A receipt whose entry is already gone has nothing left to keep.
    orphans = receipt_purge.receipts_lock(
        ids=[row.id for row in due if row.result_id not in parents], now=now
    )
    candidates = {parent or entry for entry, parent in parents.items()}

    # The question row stands for its thread; a held thread is left out by the
    # database (threads_lock.sql).
    threads = {
        thread
        for (thread,) in _entry_rows(
            "threads_lock", candidates, thread_not_held=thread_not_held_sql("board_entry.id")
        )
    }
    thread_of = {thread: thread for thread in threads}
    thread_of.update(_entry_rows("thread_replies", threads))
    # A deleted entry's receipt is due by `deleted_at` and the deletion policy in force
    # now, never by the expiry its delete stored (SPEC 8.2: no job removes it earlier).
    held, blocked = receipt_purge.receipts_claim_for_results(
        operation=POST_ENTRY, result_ids=thread_of.keys(), now=now,
        deleted_before=now - deletion_retention,
    )
    in_thread: dict[int, list[receipt_purge.ReceiptRow]] = defaultdict(list)
    for row in held:
        in_thread[thread_of[row.result_id]].append(row)
    # A receipt another transaction holds (a retry counting its attempt, the deletion
    # purge) keeps its thread for the next run.
    blocked_threads = {thread_of[result] for result in blocked}

    # Purged only if every receipt of the thread has expired and is ours to remove.
    purgeable = {
        thread
        for thread in threads - blocked_threads
        if all(row.expired for row in in_thread[thread])
    }
    gone_receipts = [row for thread in purgeable for row in in_thread[thread]] + orphans
    gone_entries = [entry for entry, thread in thread_of.items() if thread in purgeable]

    tombstones = receipt_purge.receipts_entomb(
        receipts=gone_receipts,
        tombstone_retention=tombstone_retention,
        deletion_retention=deletion_retention,
    )
    entries = receipt_purge.delete_ids(Entry, gone_entries)
    counts = {
        "threads": len(purgeable),
        "entries": entries,
        "receipts": len(gone_receipts),
        "tombstones": tombstones,
    }
    return Batch(counts=counts, more=len(due) == limit, after=next_after)


def _entry_rows(name: str, ids, **slots: str) -> list[tuple]:
    """The rows of the statement `name` of `sql/<engine>/` beside this module, of these
    entry ids (see maintenance/tombstones/purge.py on why the purge avoids the ORM for
    its batches)."""
    ids = [value for value in ids if value is not None]
    if not ids:
        return []
    list_slots, params = receipt_purge.values_in("ids", ids)
    with connection.cursor() as cursor:
        cursor.execute(_statement(name, **list_slots, **slots), params)
        return cursor.fetchall()


def _statement(name: str, **slots: str) -> str:
    return receipt_purge.statement_at(f"maintenance/sql/{{engine}}/{name}.sql", **slots)


# --- Deletion records -------------------------------------------------------------------

DELETION_KEYS = ["receipts", "entries", "tombstones", "texts"]
_THREAD = "COALESCE(board_entry.parent_id, board_entry.id)"


def _held_texts_blank(*, limit: int) -> int:
    """Blank the text and actor that a hold kept on deleted entries, once no hold covers
    their thread (held_texts.sql)."""
    sql = _statement(
        "held_texts", limit=str(int(limit)), thread_not_held=thread_not_held_sql(_THREAD)
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)
        ids = [row[0] for row in cursor.fetchall()]
    if not ids:
        return 0
    return entries_text_blank(Entry.objects.filter(id__in=ids, deleted_at__isnull=False))


def purge_deletion_records(
    *,
    now: datetime,
    batch_size: int,
    time_budget: timedelta | None = None,
    dry_run: bool = False,
    enough: Callable[[dict[str, int]], bool] | None = None,
) -> PurgeResult:
    """Turn deleted entries' receipts whose `deleted_at` is older than the `deletion`
    policy in force at this purge into tombstones with reason `deleted`, and drop the
    textless entry rows nothing depends on."""
    tombstone = retention.policy_in_force(retention.TOMBSTONE, fresh=True).duration
    return run_batches(
        job="purge-deletion-records",
        keys=DELETION_KEYS,
        batch=lambda after: _deletions_batch(
            now=now, limit=batch_size, after=after, tombstone_retention=tombstone
        ),
        time_budget=purge_time_budget(time_budget),
        dry_run=dry_run,
        enough=enough,
    )


def _deletions_batch(
    *, now: datetime, limit: int, after, tombstone_retention: timedelta
) -> Batch:
    # Due at `deleted_at` plus the deletion policy in force now, whatever expiry the
    # delete stored (SPEC 8.1, 8.2): a shortened policy acts at this purge, a lengthened
    # one keeps deletions made under the shorter.
    deletion = retention.policy_in_force(retention.DELETION, fresh=True).duration
    due = receipt_purge.receipts_deleted_due(
        operation=POST_ENTRY, now=now, deleted_before=now - deletion, limit=limit,
        after=after,
    )
    texts = _held_texts_blank(limit=limit)
    if not due:
        counts = dict.fromkeys(DELETION_KEYS, 0) | {"texts": texts}
        return Batch(counts=counts, more=texts == limit, after=after)
    rows = Entry.objects.filter(id__in=[row.result_id for row in due if row.result_id])
    replies, questions, parents = [], set(), set()
    for entry, kind, parent in rows.values_list("id", "type", "parent_id"):
        if kind == Entry.Type.REPLY:
            replies.append(entry)
            parents.add(parent)
        else:
            questions.add(entry)

    tombstones = receipt_purge.receipts_entomb(
        receipts=due, tombstone_retention=tombstone_retention, deletion_retention=deletion
    )
    removed = receipt_purge.delete_ids(Entry, replies)
    # A deleted question's row goes too unless replies still hang on it (then the thread
    # purge takes it with them); so does a deleted question whose last reply just went.
    candidates = questions | parents
    still_receipted = {
        row.result_id
        for row in receipt_purge.receipts_for_results(
            operation=POST_ENTRY, result_ids=candidates, now=now
        )
    }
    empty = (
        Entry.objects.filter(id__in=candidates - still_receipted, deleted_at__isnull=False)
        .exclude(Exists(Entry.objects.filter(parent_id=OuterRef("pk"))))
        .values_list("id", flat=True)
    )
    removed += receipt_purge.delete_ids(Entry, list(empty))
    counts = {
        "receipts": len(due), "entries": removed, "tombstones": tombstones, "texts": texts,
    }
    return Batch(
        counts=counts,
        more=len(due) == limit or texts == limit,
        after=(due[-1].deleted_at, due[-1].id),
    )


# --- Tombstones, attempts and counters --------------------------------------------------


def purge_tombstones(
    *,
    now: datetime,
    batch_size: int,
    time_budget: timedelta | None = None,
    dry_run: bool = False,
    enough: Callable[[dict[str, int]], bool] | None = None,
) -> PurgeResult:
    """Remove tombstones past their expiry; after that an old id is simply unknown."""

    def batch(after) -> Batch:
        removed = receipt_purge.tombstones_purge(now=now, limit=batch_size)
        return Batch(counts={"tombstones": removed}, more=removed == batch_size)

    return run_batches(
        job="purge-tombstones",
        keys=["tombstones"],
        batch=batch,
        time_budget=purge_time_budget(time_budget),
        dry_run=dry_run,
        enough=enough,
    )


def purge_attempts(
    *,
    now: datetime,
    batch_size: int,
    time_budget: timedelta | None = None,
    dry_run: bool = False,
    enough: Callable[[dict[str, int]], bool] | None = None,
) -> PurgeResult:
    """Remove attempts past `SETTLE_ATTEMPT_RETENTION` and hourly rate-limit counters
    older than `SETTLE_COUNTER_RETENTION` (only the current hour's count is ever read)."""
    attempt_retention = retention.policy_in_force(retention.ATTEMPT, fresh=True).duration

    def batch(after) -> Batch:
        attempts = receipt_purge.attempts_purge(before=now - attempt_retention, limit=batch_size)
        old = HourlyCounter.objects.filter(
            hour__lt=now - settings.SETTLE_COUNTER_RETENTION
        ).order_by("hour")[:batch_size]
        counter_ids = list(old.select_for_update(skip_locked=True).values_list("id", flat=True))
        counters = receipt_purge.delete_ids(HourlyCounter, counter_ids)
        return Batch(
            counts={"attempts": attempts, "counters": counters},
            more=attempts == batch_size or counters == batch_size,
        )

    return run_batches(
        job="purge-attempts",
        keys=["attempts", "counters"],
        batch=batch,
        time_budget=purge_time_budget(time_budget),
        dry_run=dry_run,
        enough=enough,
    )


# --- Runs: what the tasks record ----------------------------------------------------------


def job_run(*, job: str, purge: Callable[..., PurgeResult], dry_run: bool = False) -> dict:
    """Run one purge now with the configured batch size and budget; record the run.

    A dry run records nothing. A failure is recorded with the error's class and SQLSTATE
    (never its text, which may quote data) and not raised: the next run retries.
    """
    started = timezone.now()
    clock = time.monotonic()
    run = MaintenanceRun(job=job, started_at=started)
    try:
        result = purge(
            now=started,
            batch_size=settings.SETTLE_PURGE_BATCH_SIZE,
            time_budget=settings.SETTLE_PURGE_TIME_BUDGET,
            dry_run=dry_run,
        )
        run.counts = result.counts
        run.complete = result.complete
    except DatabaseError as error:
        run.error = f"{type(error).__name__} (sqlstate {sqlstate(error)})"[:200]
        run.complete = False
        log.warning("%s failed: %s", job, run.error)
    run.finished_at = timezone.now()
    run.duration_seconds = round(time.monotonic() - clock, 3)
    if not dry_run:
        run.save()
        log.info("%s: removed %s in %.3fs", job, run.counts, run.duration_seconds)
    return {"job": job, "counts": run.counts, "complete": run.complete, "error": run.error}


def purge_jobs() -> dict[str, str]:
    """Every purge in the beat schedule: job name to task name."""
    return {
        name: entry["task"]
        for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
        if name.startswith("purge-")
    }


def purge_enqueue_all() -> list[str]:
    """Queue every purge for the worker now (the console's `Run purge now`)."""
    from board.celery import app

    for task in purge_jobs().values():
        app.send_task(task)
    return list(purge_jobs())
