"""What the maintenance jobs did, and the lock that keeps two SQLite runs apart."""

from django.db import models

# The deliveries' models live in their own room and are imported from there
# (maintenance.deliveries.models); Django loads an app's models from this module only, so
# importing them here is what registers them.
from maintenance.deliveries.models import (  # noqa: F401
    Delivery,
    DeliveryAttempt,
    Endpoint,
    EndpointMinute,
)


class MaintenanceRun(models.Model):
    """One run of one job: when, how long, what it removed, and how it failed if it did.

    `error` holds the exception's class and SQLSTATE, never its text (SPEC 11.4).
    """

    job = models.CharField(max_length=64)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    counts = models.JSONField(default=dict)
    # False when the run stopped at its time budget with work left for the next run.
    complete = models.BooleanField(default=True)
    error = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["job", "-started_at"], name="run_job_latest")]

    def __str__(self) -> str:
        return f"{self.job} at {self.started_at:%Y-%m-%d %H:%M:%S}"


class ActivityMinute(models.Model):
    """What the board saw in one UTC minute: new entries and write attempts by outcome.

    Kept by a beat job (maintenance/activity.py) so the dashboard reads at most two days
    of these rows, whatever the size of the board, and the post path writes nothing more.
    """

    minute = models.DateTimeField(unique=True)
    posts = models.PositiveIntegerField(default=0)
    new = models.PositiveIntegerField(default=0)
    replayed = models.PositiveIntegerField(default=0)
    conflicts = models.PositiveIntegerField(default=0)
    rate_limited = models.PositiveIntegerField(default=0)
    rolled_up_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.minute:%Y-%m-%d %H:%M}: {self.posts} posts"


class ExpiringReceipts(models.Model):
    """Receipts of posts by the minute they were written and the minute they expire; a
    `deleted` row counts instead the receipts deleted in its minute, by the minute they
    were to expire.

    Kept by the forecast job (maintenance/expiring.py) so the retention page's chart of
    receipts expiring per day reads these rows, whatever the size of the board, and the
    post path writes nothing more.
    """

    minute = models.DateTimeField()
    deleted = models.BooleanField(default=False)
    expires_minute = models.DateTimeField()
    # The UTC day of `expires_minute`, kept so the chart groups by a column: SQLite
    # computes a date by calling back into Python for each row.
    expires_on = models.DateField()
    receipts = models.PositiveIntegerField(default=0)
    rolled_up_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["minute", "deleted", "expires_minute"], name="expiring_one_per_minute"
            ),
        ]
        # The chart reads a range of expiries; the job drops the days gone by the same.
        indexes = [models.Index(fields=["expires_minute"], name="expiring_by_expiry")]

    def __str__(self) -> str:
        kind = "deleted" if self.deleted else "written"
        return (f"{self.receipts} {kind} at {self.minute:%Y-%m-%d %H:%M}, "
                f"expiring {self.expires_minute:%Y-%m-%d %H:%M}")


class PurgeForecast(models.Model):
    """The last dry run of every purge (SPEC 8.3), recorded by a beat job so the
    retention page shows it without running one. Only the newest row is kept."""

    measured_at = models.DateTimeField(db_index=True)
    duration_seconds = models.FloatField()
    # As forecast.purge_forecast returns it: job name to {"removed", "held", "counts"}.
    jobs = models.JSONField(default=dict)
    # The tombstones counted exactly at the same time: {"count": N, "bytes": N, "source": ...}.
    tombstones = models.JSONField(default=dict)
    # Receipts expiring per day from then, [["YYYY-MM-DD", N], ...], as the job read them
    # from the rollup it keeps (maintenance/expiring.py).
    expiring = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"forecast at {self.measured_at:%Y-%m-%d %H:%M:%S}"


class RunLock(models.Model):
    """A lease on one job, taken by a run on SQLite (PostgreSQL uses SKIP LOCKED instead).

    A lease rather than a flag, so a run that died holding it blocks nobody for long.
    """

    job = models.CharField(max_length=64, primary_key=True)
    holder = models.UUIDField()
    expires_at = models.DateTimeField()


__all__ = [
    "ActivityMinute", "ExpiringReceipts", "MaintenanceRun", "PurgeForecast", "RunLock",
]
