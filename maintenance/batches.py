"""The batch loop every purge runs (SPEC 8): one short transaction a batch, until a batch
comes back short, the time budget is spent, or the caller has counted enough; a lease where
the engine needs one so two runs at once do not both work; a dry run rolled back whole.
The purges themselves are in maintenance/purges.py (and maintenance/deliveries/purge.py,
moderation/actions.py)."""

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from maintenance import tombstones
from maintenance.models import RunLock

log = logging.getLogger(__name__)


@dataclass
class PurgeResult:
    """What one run removed (or, in a dry run, would remove)."""

    counts: dict[str, int]
    # False when the run stopped (time budget spent, or `enough`) with work left to do.
    complete: bool = True
    # True when another run held the job's lock (SQLite) and this one did nothing.
    skipped: bool = False
    batches: int = 0


@dataclass
class Batch:
    counts: dict[str, int]
    more: bool
    after: object = None


def purge_time_budget(time_budget: timedelta | None) -> timedelta:
    return settings.SETTLE_PURGE_TIME_BUDGET if time_budget is None else time_budget


# --- The batch loop ---------------------------------------------------------------------


def run_batches(
    *,
    job: str,
    keys: list[str],
    batch: Callable[[object], Batch],
    time_budget: timedelta,
    dry_run: bool = False,
    enough: Callable[[dict[str, int]], bool] | None = None,
) -> PurgeResult:
    """Call `batch(after)` in one transaction each until it says no more, time is up, or
    `enough(counts so far)` holds (a forecast counting up to a bound)."""
    result = PurgeResult(counts=dict.fromkeys(keys, 0))
    deadline = time.monotonic() + time_budget.total_seconds()
    with _run_lock(job, lease=time_budget + timedelta(minutes=1)) as held:
        if not held:
            log.info("%s: another run holds the lock; nothing done", job)
            result.skipped = True
            return result
        with _rolled_back(dry_run):
            after = None
            while True:
                with transaction.atomic():
                    done = batch(after)
                result.batches += 1
                for key, value in done.counts.items():
                    result.counts[key] += value
                log.debug("%s: batch %d removed %s", job, result.batches, done.counts)
                after = done.after
                if not done.more:
                    break
                if time.monotonic() >= deadline or (enough and enough(result.counts)):
                    result.complete = False
                    break
    return result


@contextmanager
def _run_lock(job: str, *, lease: timedelta) -> Iterator[bool]:
    """A lease on the job (`RunLock`) where the engine needs one (SQLite): one run works,
    another returns at once (False). PostgreSQL's runs need none: SKIP LOCKED splits the
    rows between them."""
    if not tombstones.for_connection().runs_need_a_lease():
        yield True
        return
    holder = uuid.uuid4()
    moment = timezone.now()  # wall clock, not the purge's `now`: a lease is real time
    # Read-then-write is safe: the transaction is BEGIN IMMEDIATE, so no other run can
    # take the lease between the read and the write.
    with transaction.atomic():
        current = RunLock.objects.filter(job=job).first()
        held = current is None or current.expires_at <= moment
        if held:
            RunLock.objects.update_or_create(
                job=job, defaults={"holder": holder, "expires_at": moment + lease}
            )
    try:
        yield held
    finally:
        if held:
            RunLock.objects.filter(job=job, holder=holder).delete()


@contextmanager
def _rolled_back(dry_run: bool) -> Iterator[None]:
    """A dry run does the real work inside one transaction and rolls it back, so what it
    reports is exactly what a run would remove (it holds its locks meanwhile)."""
    if not dry_run:
        yield
        return
    with transaction.atomic():
        yield
        transaction.set_rollback(True)
