"""The audit log's own retention job, scheduled with the others in CELERY_BEAT_SCHEDULE."""

from celery import shared_task

from maintenance.services import job_run
from moderation.services import audit_purge


@shared_task(name="moderation.purge_audit_events")
def purge_audit_events(dry_run: bool = False) -> dict:
    return job_run(job="purge-audit-events", purge=audit_purge, dry_run=dry_run)
