"""What the console's retention page shows. Nothing here writes. (What the deliveries
pages read is in maintenance/deliveries/selectors.py.)"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from celery.schedules import crontab, maybe_schedule
from django.conf import settings

from board.retention import policies as retention
from maintenance import tombstones
from maintenance.models import MaintenanceRun, PurgeForecast
from maintenance.purges import purge_jobs
from receipts.models import Tombstone

# What each job keeps and for how long, in the words of SPEC 8; `setting` names the
# environment variable (or fixed setting) that sets it.
POLICIES = {
    "purge-expired-threads": (
        "A thread (question and replies) is removed once every receipt in it has expired; "
        "one tombstone per receipt stays.",
        "SETTLE_ENTRY_RETENTION",
    ),
    "purge-deletion-records": (
        "A deleted entry's receipt becomes a tombstone (reason deleted) after its "
        "deletion retention.",
        "SETTLE_DELETION_RETENTION",
    ),
    "purge-tombstones": (
        "Tombstones go after their own retention, counted from the receipt's expiry; an "
        "old request_id is then unknown.",
        "SETTLE_TOMBSTONE_RETENTION",
    ),
    "purge-attempts": (
        "The per-attempt log goes after its retention; hourly rate-limit counters after "
        "two hours.",
        "SETTLE_ATTEMPT_RETENTION",
    ),
    "purge-audit-events": ("Audit events go after a year.", "SETTLE_AUDIT_RETENTION"),
    "purge-deliveries": (
        "Deliveries in a final state go, with their attempts, after their retention; "
        "outcome_unknown ones stay until an operator settles them.",
        "SETTLE_DELIVERY_RETENTION",
    ),
}


@dataclass(frozen=True)
class JobOverview:
    job: str
    task: str
    policy: str
    setting: str
    retention: timedelta
    schedule: str
    last_run: MaintenanceRun | None
    next_run_at: datetime


@dataclass(frozen=True)
class RetentionOverview:
    jobs: list[JobOverview]
    # tombstones_estimate's answer: never an exact count of the whole table.
    tombstones: dict


def retention_overview(
    now: datetime, *, recorded: PurgeForecast | None = None
) -> RetentionOverview:
    """The purge jobs with their last runs (by `run_job_latest`) and the tombstones'
    estimate; `recorded` is the last forecast, whose tombstone count SQLite falls back on."""
    jobs = []
    # The policies in force (console over environment, SPEC 8.1), not the bare settings.
    in_force = retention.retention_current(fresh=True)
    for job, task in purge_jobs().items():
        policy, setting = POLICIES.get(job, ("", ""))
        last = MaintenanceRun.objects.filter(job=job).order_by("-started_at").first()
        schedule = maybe_schedule(settings.CELERY_BEAT_SCHEDULE[job]["schedule"])
        jobs.append(
            JobOverview(
                job=job,
                task=task,
                policy=policy,
                setting=setting,
                retention=in_force[retention.POLICY_OF_SETTING[setting]].duration
                if setting in retention.POLICY_OF_SETTING
                else getattr(settings, setting, timedelta(0)),
                schedule=_describe(settings.CELERY_BEAT_SCHEDULE[job]["schedule"]),
                last_run=last,
                next_run_at=_next_run(schedule, last.started_at if last else None, now),
            )
        )
    return RetentionOverview(jobs=jobs, tombstones=tombstones_estimate(recorded=recorded))


def _next_run(schedule, last_started: datetime | None, now: datetime) -> datetime | None:
    """When beat will next send the job, estimated from its last recorded run; None for
    an interval job that never ran (beat sends it one interval after it starts).

    Beat keeps its own schedule file; this reads the same schedule against the last
    run we recorded, which agrees with beat while beat is running.
    """
    if isinstance(schedule, crontab):
        return _next_daily(schedule, now)
    if last_started is None:
        return None
    return max(now, last_started + schedule.run_every)


def _next_daily(schedule: crontab, now: datetime) -> datetime:
    # Settle's crontab entries are daily at fixed minutes; celery's remaining_estimate
    # measures from its own clock and came out a minute early on the page.
    today = now.replace(second=0, microsecond=0)
    return min(
        moment
        for day in (0, 1)
        for hour in schedule.hour
        for minute in schedule.minute
        if (moment := today.replace(hour=hour, minute=minute) + timedelta(days=day)) > now
    )


def _describe(interval) -> str:
    if isinstance(interval, crontab):
        return f"daily at {sorted(interval.hour)[0]:02d}:{sorted(interval.minute)[0]:02d} UTC"
    return f"every {describe_duration(interval)}"


def describe_duration(duration: timedelta) -> str:
    """A duration in the largest whole unit that fits: `30 days`, `10 minutes`, `90 s`."""
    seconds = int(duration.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} s"


def tombstone_disk_size(count: int) -> tuple[int | None, str]:
    """Bytes the tombstone table and its indexes take on disk, and how that was found:
    the engine's catalog, else an estimate from `count` (SQLite built without dbstat)."""
    return tombstones.for_connection().tombstones_disk_size(count)


# Counted exactly up to here on SQLite; past it the page gives the last recorded count.
TOMBSTONE_COUNT_BOUND = 10_000


def tombstones_estimate(*, recorded: PurgeForecast | None) -> dict:
    """How many tombstones there are and their size on disk, without counting a table
    that grows with every purge: `{"count", "bytes", "about", "exceeded", "source"}`.

    Up to `TOMBSTONE_COUNT_BOUND`: an exact count (it stops there, by index). Past it,
    the engine's own estimate as of the table's last ANALYZE ("about"): on PostgreSQL the
    planner's `reltuples` and `pg_total_relation_size`, both read from the catalog
    (`reltuples` alone is stale while a table shrinks or is new); on SQLite
    `sqlite_stat1` and dbstat. Else the estimate the forecast job last recorded, with its
    time; else "more than"."""
    found = Tombstone.objects.values("pk")[: TOMBSTONE_COUNT_BOUND + 1].count()
    if found <= TOMBSTONE_COUNT_BOUND:
        size, source = tombstone_disk_size(found)
        return {"count": found, "bytes": size, "about": False, "exceeded": False,
                "source": source}
    planned = tombstones.for_connection().tombstones_planned()
    if planned is not None and planned[0] > TOMBSTONE_COUNT_BOUND:
        return {"count": planned[0], "bytes": planned[1], "about": True, "exceeded": False,
                "source": planned[2]}
    if recorded is not None and recorded.tombstones.get("about"):
        return {**recorded.tombstones, "source": "forecast",
                "measured_at": recorded.measured_at}
    return {"count": TOMBSTONE_COUNT_BOUND, "bytes": None, "about": False, "exceeded": True,
            "source": "bound"}
