"""Maintenance's series for `/metrics`, read from the database at each scrape.

Found by board.serving.metrics (it imports every app's `metrics` module once), so board never
imports maintenance. The values come from the recorded runs (`MaintenanceRun`), which
are the same on every host: a job run by a Celery worker anywhere is counted, and a web
process restarting loses nothing. The deliveries' series are in
maintenance/deliveries/metrics.py, imported here so that board finds them.
"""

from collections.abc import Iterator

from django.db.models import BigIntegerField, Max, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from board.serving import metrics
from maintenance.models import MaintenanceRun

# Rows each job removes, by kind: the keys of its recorded counts. Tombstones that the
# thread and deletion purges *write* are not purged rows, and `threads` are entries.
PURGED = {
    "entries": ("purge-expired-threads", "purge-deletion-records"),
    "receipts": ("purge-expired-threads", "purge-deletion-records"),
    "tombstones": ("purge-tombstones",),
    "attempts": ("purge-attempts",),
    "counters": ("purge-attempts",),
    "audit_events": ("purge-audit-events",),
}


@metrics.source
def maintenance_runs() -> Iterator[Metric]:
    purged = CounterMetricFamily(
        "settle_purged_rows", "Rows removed by retention purges, by kind, over all runs.",
        labels=["kind"],
    )
    # One statement: a sum per kind over the runs of the jobs that remove it.
    totals = MaintenanceRun.objects.aggregate(**{
        kind: Sum(Cast(KT(f"counts__{kind}"), BigIntegerField()), filter=Q(job__in=jobs))
        for kind, jobs in PURGED.items()
    })
    for kind, total in totals.items():
        purged.add_metric([kind], total or 0)
    yield purged

    last = GaugeMetricFamily(
        "settle_job_last_success_timestamp_seconds",
        "When each maintenance job last finished without error (Unix time).",
        labels=["job"],
    )
    finished = (
        MaintenanceRun.objects.filter(error="", finished_at__isnull=False)
        .values_list("job").annotate(last=Max("finished_at")).order_by()
    )
    for job, moment in finished:
        last.add_metric([job], moment.timestamp())
    yield last


# Registered after the runs' sources, so `/metrics` lists the series in the order it did.
from maintenance.deliveries import metrics as delivery_metrics  # noqa: E402, F401
