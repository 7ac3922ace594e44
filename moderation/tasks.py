"""The audit log's own retention job, scheduled with the others in CELERY_BEAT_SCHEDULE."""

from celery import shared_task

from maintenance.services import job_run
from moderation.services import audit_purge


@shared_task(name="moderation.purge_audit_events")
def purge_audit_events(dry_run: bool = False) -> dict:
    return job_run(job="purge-audit-events", purge=audit_purge, dry_run=dry_run)


# An erasure (moderation.erasure): acknowledged only when it returns, so a worker killed
# mid-way leaves the message to be delivered again; `erasures_resume` (beat, every minute)
# also hands a stale running erasure to a worker. Running one twice is safe.
@shared_task(
    name="moderation.erasure_run", acks_late=True, reject_on_worker_lost=True, time_limit=6 * 3600
)
def erasure_run(erasure_id: int, batch_size: int | None = None) -> dict:
    from moderation import erasure

    done = erasure.erasure_run(
        erasure_id=erasure_id, batch_size=batch_size or erasure.ERASE_BATCH_SIZE
    )
    return {"erasure": done.pk, "done": done.done, "state": done.state}


@shared_task(name="moderation.erasures_resume")
def erasures_resume(batch_size: int | None = None) -> list[int]:
    from moderation import erasure

    stale = erasure.erasures_stale()
    for erasure_id in stale:
        erasure_run.delay(erasure_id, batch_size)
    return stale
