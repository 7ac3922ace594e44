"""What the next purge will do (SPEC 8.3): the dry run's counts per job, what holds keep
back, receipts expiring per day, and the recent runs of each job.

Design note
-----------
The counts are not estimated: `purge_forecast` runs every purge for real inside one
transaction and rolls it back, so the number it reports is, by construction, the number
the same purge would record. The `purge` command and the console's retention page both call it.

Each job's `removed` is the one count the job records for the rows it exists to remove
(`REMOVED_KEY`): entries for expired threads, receipts for deletion records, and so on.
"""

from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, DateTimeField, ExpressionWrapper, F, When
from django.db.models.functions import TruncDate

from board.models import Hold
from board.retention import policies as retention
from maintenance import services
from maintenance.deliveries import purge as delivery_purge
from maintenance.models import MaintenanceRun
from receipts.models import Receipt

# The count a job's `removed` is read from, as the job records it in MaintenanceRun.counts.
REMOVED_KEY = {
    "purge-expired-threads": "entries",
    "purge-deletion-records": "receipts",
    "purge-tombstones": "tombstones",
    "purge-attempts": "attempts",
    "purge-audit-events": "audit_events",
    "purge-deliveries": "deliveries",
}
JOBS = list(REMOVED_KEY)


# Each purge by its beat job's name. The audit log's purge is the moderation app's, which
# registers it when it loads (moderation/apps.py), so maintenance never imports moderation.
PURGES: dict[str, Callable[..., services.PurgeResult]] = {
    "purge-expired-threads": services.purge_expired_threads,
    "purge-deletion-records": services.purge_deletion_records,
    "purge-tombstones": services.purge_tombstones,
    "purge-attempts": services.purge_attempts,
    "purge-deliveries": delivery_purge.purge_deliveries,
}


def purge_register(*, job: str, purge: Callable[..., services.PurgeResult]) -> None:
    """Count another app's purge in the forecast under its beat job's name."""
    PURGES[job] = purge


def removed_count(*, job: str, counts: dict[str, int]) -> int:
    return int(counts.get(REMOVED_KEY[job], 0))


def purge_forecast(*, now: datetime) -> dict[str, dict]:
    """Per job, `{"removed": N, "held": N, "counts": {...}}`: what a purge at `now` would
    remove (a dry run, nothing changes), what a hold keeps back, and every count the job
    records. `--json` and the page show `removed` and `held`.

    The jobs run as `purge` runs them, one after the other in the beat schedule's order,
    inside one transaction rolled back at the end: a job sees what the jobs before it
    would have removed (the thread purge takes deleted replies' receipts with their
    thread, so the deletion-record purge does not count them again).
    """
    kept = _dry_run(now=now, lift_holds=False)
    # "Held" is what the same purge would remove were no hold active: the same dry run
    # again with every hold lifted inside its rolled-back transaction, so the number is
    # exact by construction rather than a second query that could drift from the purge's.
    unheld = _dry_run(now=now, lift_holds=True)
    return {
        job: {
            "removed": removed_count(job=job, counts=counts),
            "held": max(0, removed_count(job=job, counts=unheld[job])
                        - removed_count(job=job, counts=counts)),
            "counts": counts,
        }
        for job, counts in kept.items()
    }


def _dry_run(*, now: datetime, lift_holds: bool) -> dict[str, dict[str, int]]:
    counts = {}
    with transaction.atomic():
        if lift_holds:
            Hold.objects.filter(released_at__isnull=True).update(released_at=now)
        for job in services.purge_jobs():
            result = PURGES[job](
                now=now,
                batch_size=settings.SETTLE_PURGE_BATCH_SIZE,
                # No time budget cuts the count short: it covers everything due.
                time_budget=timedelta(days=1),
            )
            counts[job] = result.counts
        transaction.set_rollback(True)
    return counts


def receipts_expiring_by_day(*, now: datetime, days: int = 30) -> list[tuple[datetime, int]]:
    """Receipts that expire within the next `days` days (after `now`, up to `now + days`),
    per UTC day: today (its rest) to the day `days` ahead (its part up to the same time),
    zeros included, so `days + 1` bars.

    A live receipt expires at its `receipt_expires_at`; a deleted one at `deleted_at`
    plus the `deletion` policy in force now, the moment the purges go by."""
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    deletion = retention.policy_in_force(retention.DELETION, fresh=True).duration
    expires = Case(
        When(deleted_at__isnull=False, then=ExpressionWrapper(
            F("deleted_at") + deletion, output_field=DateTimeField()
        )),
        default=F("receipt_expires_at"),
        output_field=DateTimeField(),
    )
    rows = (
        Receipt.objects.annotate(expires=expires)
        .filter(expires__gt=now, expires__lte=now + timedelta(days=days))
        .annotate(day=TruncDate("expires"))
        .values("day")
        .annotate(n=Count("id"))
    )
    per_day = {row["day"]: row["n"] for row in rows}
    out = []
    for offset in range(days + 1):
        day = start + timedelta(days=offset)
        out.append((day, per_day.get(day.date(), 0)))
    return out


def recent_runs(*, per_job: int = 30) -> dict[str, list[MaintenanceRun]]:
    """The last `per_job` recorded runs of each purge job, oldest first."""
    runs = {}
    for job in JOBS:
        latest = MaintenanceRun.objects.filter(job=job).order_by("-started_at")[:per_job]
        runs[job] = list(reversed(latest))
    return runs
