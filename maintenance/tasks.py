"""Celery tasks: thin doors onto maintenance.purges. Beat runs them (board/settings.py,
CELERY_BEAT_SCHEDULE); `manage.py purge` and the console's `Run purge now` reach them too.
The deliveries' tasks are in maintenance/deliveries/tasks.py, imported here so that the
worker's autodiscovery (which looks for `<app>.tasks`) registers them.
"""

from celery import shared_task
from django.utils import timezone

from maintenance import activity, forecast, purges
from maintenance.deliveries import purge as delivery_purge
from maintenance.deliveries import tasks as delivery_tasks  # noqa: F401 (registers them)


@shared_task(name="maintenance.purge_expired_threads")
def purge_expired_threads(dry_run: bool = False) -> dict:
    return purges.job_run(
        job="purge-expired-threads", purge=purges.purge_expired_threads, dry_run=dry_run
    )


@shared_task(name="maintenance.purge_deletion_records")
def purge_deletion_records(dry_run: bool = False) -> dict:
    return purges.job_run(
        job="purge-deletion-records", purge=purges.purge_deletion_records, dry_run=dry_run
    )


@shared_task(name="maintenance.purge_tombstones")
def purge_tombstones(dry_run: bool = False) -> dict:
    return purges.job_run(
        job="purge-tombstones", purge=purges.purge_tombstones, dry_run=dry_run
    )


@shared_task(name="maintenance.purge_attempts")
def purge_attempts(dry_run: bool = False) -> dict:
    return purges.job_run(job="purge-attempts", purge=purges.purge_attempts, dry_run=dry_run)


@shared_task(name="maintenance.purge_deliveries")
def purge_deliveries(dry_run: bool = False) -> dict:
    return purges.job_run(
        job="purge-deliveries", purge=delivery_purge.purge_deliveries, dry_run=dry_run
    )


@shared_task(name="maintenance.activity_roll_up")
def activity_roll_up() -> dict:
    rolled = activity.activity_roll_up(now=timezone.now())
    return {"since": rolled.since.isoformat(), "minutes": rolled.minutes, "posts": rolled.posts}


@shared_task(name="maintenance.purge_forecast_record")
def purge_forecast_record() -> dict:
    recorded = forecast.forecast_record(now=timezone.now())
    return {"measured_at": recorded.measured_at.isoformat(),
            "duration_seconds": recorded.duration_seconds}
