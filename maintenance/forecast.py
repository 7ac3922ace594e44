"""What the next purge will do (SPEC 8.3): the dry run's counts per job, what holds keep
back, receipts expiring per day, and the recent runs of each job.

Design note
-----------
The counts are not estimated: `purge_forecast` runs every purge for real inside one
transaction and rolls it back, so the number it reports is, by construction, the number
the same purge would record. The `purge` command calls it and counts everything due. The
console's retention page does not: with a backlog of 500,000 rows the dry run (twice, for
what holds keep back) took 87 s, past gunicorn's timeout. A beat job (`forecast-purges`)
runs it instead and records the result (`forecast_record`, a `PurgeForecast` row); the
page shows the last one with its age, or says it was not yet measured.

The beat job counts up to a bound (`FORECAST_BOUND`, 1,000, one batch at the default
batch size): each job's dry run stops after the batch that brings its `removed` to the
bound, so the job costs one batch a purge, each by index, at any size of the board (SPEC
11.7; ten batches a purge took 4.4 s at 5,000,000 entries against 0.5 s at 50,000, whose
backlogs are smaller than ten batches). A job stopped there is recorded `bounded` and
shown as "more than 1,000". What a hold keeps back is the difference of two such counts,
so it is exact only when neither stopped; when only the run with holds lifted stopped it
is "at least" the difference; when the run as is stopped it is not known (`held` None).
With no hold active the second run is not made: nothing is held. A job counted after a
bounded one sees the board as a run stopped there would leave it (the deletion-record
purge may then count deleted replies' receipts the thread purge would have taken). Rows
a hold keeps are walked but not counted, so a hold over a large backlog lengthens the
run as is by that backlog, as it lengthens every purge's own run.

The receipts expiring per day over the next 30 days are recorded with it, from a rollup
the same job brings up to date first (maintenance/expiring.py): with the default 30-day
retention every live receipt expires within those days, so counting them would cost
what the board holds (SPEC 11.7); the rollup costs the posts since its last count and
a read of at most a row a minute for each retention in use. What else the page
reads is bounded by index: the last runs of each job by `run_job_latest`; the
tombstones' number an estimate (`tombstones_estimate`), which the job records too.

Each job's `removed` is the one count the job records for the rows it exists to remove
(`REMOVED_KEY`): entries for expired threads, receipts for deletion records, and so on.
"""

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from board.models import Hold
from maintenance import purges, selectors
from maintenance.batches import PurgeResult
from maintenance.deliveries import purge as delivery_purge
from maintenance.expiring import expiring_by_day, expiring_roll_up
from maintenance.models import MaintenanceRun, PurgeForecast

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

# The recorded forecast counts each job's dry run up to this many rows of what it removes
# (one batch at the default batch size) and says "more than" past it (SPEC 11.7);
# `purge --dry-run` counts everything. Read when the job runs, so a test can lower it.
FORECAST_BOUND = 1_000


# Each purge by its beat job's name. The audit log's purge is the moderation app's, which
# registers it when it loads (moderation/apps.py), so maintenance never imports moderation.
PURGES: dict[str, Callable[..., PurgeResult]] = {
    "purge-expired-threads": purges.purge_expired_threads,
    "purge-deletion-records": purges.purge_deletion_records,
    "purge-tombstones": purges.purge_tombstones,
    "purge-attempts": purges.purge_attempts,
    "purge-deliveries": delivery_purge.purge_deliveries,
}


def purge_register(*, job: str, purge: Callable[..., PurgeResult]) -> None:
    """Count another app's purge in the forecast under its beat job's name."""
    PURGES[job] = purge


def removed_count(*, job: str, counts: dict[str, int]) -> int:
    return int(counts.get(REMOVED_KEY[job], 0))


def purge_forecast(*, now: datetime, bound: int | None = None) -> dict[str, dict]:
    """Per job, `{"removed": N, "held": N, "counts": {...}}`: what a purge at `now` would
    remove (a dry run, nothing changes), what a hold keeps back, and every count the job
    records. `--json` and the page show `removed` and `held`.

    With `bound`, each job's dry run stops after the batch that brings `removed` to it,
    and each job says so: `"bounded": bool` (its `removed` and `counts` are then what was
    counted before it stopped), `"held"` None when not known and `"held_at_least": bool`
    (see the design note). Without, every count is exact.

    The jobs run as `purge` runs them, one after the other in the beat schedule's order,
    inside one transaction rolled back at the end: a job sees what the jobs before it
    would have removed (the thread purge takes deleted replies' receipts with their
    thread, so the deletion-record purge does not count them again).
    """
    kept = _dry_run(now=now, lift_holds=False, bound=bound)
    # "Held" is what the same purge would remove were no hold active: the same dry run
    # again with every hold lifted inside its rolled-back transaction, so the number is
    # exact by construction rather than a second query that could drift from the purge's.
    holding = Hold.objects.filter(released_at__isnull=True).exists()
    unheld = _dry_run(now=now, lift_holds=True, bound=bound) if holding else kept
    report = {}
    for job, (counts, stopped) in kept.items():
        removed = removed_count(job=job, counts=counts)
        more_counts, more_stopped = unheld[job]
        held = max(0, removed_count(job=job, counts=more_counts) - removed)
        report[job] = {"removed": removed, "held": held, "counts": counts}
        if bound is not None:
            report[job] |= {
                "bounded": stopped,
                "bound": bound,
                # Stopped as is: how much more the holds keep is past counting, unless
                # no hold is active.
                "held": None if stopped and holding else held,
                "held_at_least": holding and more_stopped and not stopped,
            }
    return report


def _dry_run(
    *, now: datetime, lift_holds: bool, bound: int | None
) -> dict[str, tuple[dict[str, int], bool]]:
    """Each job's counts, and whether it stopped at `bound` with more left to count."""
    counts = {}
    with transaction.atomic():
        if lift_holds:
            Hold.objects.filter(released_at__isnull=True).update(released_at=now)
        for job in purges.purge_jobs():
            result = PURGES[job](
                now=now,
                batch_size=settings.SETTLE_PURGE_BATCH_SIZE,
                # No time budget cuts the count short: it covers everything due, or
                # everything up to the bound.
                time_budget=timedelta(days=1),
                enough=None if bound is None else _reached(job, bound),
            )
            counts[job] = (result.counts, not result.complete)
        transaction.set_rollback(True)
    return counts


def _reached(job: str, bound: int) -> Callable[[dict[str, int]], bool]:
    return lambda counts: removed_count(job=job, counts=counts) >= bound


def receipts_expiring_by_day(*, now: datetime, days: int = 30) -> list[tuple[datetime, int]]:
    """Receipts that expire within the next `days` days (after `now`, up to `now + days`),
    per UTC day: today (its rest) to the day `days` ahead (its part up to the same time),
    zeros included, so `days + 1` bars.

    A live receipt expires at its `receipt_expires_at`; a deleted one at `deleted_at`
    plus the `deletion` policy in force now, the moment the purges go by. Counted from
    the rollup of maintenance/expiring.py, brought up to date first: the work is the
    posts and deletes since the last count, whatever the board holds."""
    expiring_roll_up(now=now)
    return expiring_by_day(now=now, days=days)


def recent_runs(*, per_job: int = 30) -> dict[str, list[MaintenanceRun]]:
    """The last `per_job` recorded runs of each purge job, oldest first."""
    runs = {}
    for job in JOBS:
        latest = MaintenanceRun.objects.filter(job=job).order_by("-started_at")[:per_job]
        runs[job] = list(reversed(latest))
    return runs


# --- The recorded forecast -------------------------------------------------------------


def forecast_record(*, now: datetime) -> PurgeForecast:
    """Count every purge's dry run up to `FORECAST_BOUND` (with what holds keep
    back), estimate the tombstones, and keep them as the one `PurgeForecast` the
    retention page shows."""
    clock = time.monotonic()
    report = purge_forecast(now=now, bound=FORECAST_BOUND)
    tombstones = selectors.tombstones_estimate(recorded=None)
    expiring = [[f"{day:%Y-%m-%d}", n] for day, n in receipts_expiring_by_day(now=now)]
    recorded = PurgeForecast.objects.create(
        measured_at=now,
        duration_seconds=round(time.monotonic() - clock, 3),
        jobs=report,
        tombstones=tombstones,
        expiring=expiring,
    )
    PurgeForecast.objects.filter(measured_at__lt=recorded.measured_at).delete()
    return recorded


def forecast_latest() -> PurgeForecast | None:
    """The last recorded forecast; None before the job first ran."""
    return PurgeForecast.objects.order_by("-measured_at").first()
