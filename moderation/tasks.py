"""The audit log's own retention job, scheduled with the others in CELERY_BEAT_SCHEDULE."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from maintenance.purges import job_run
from moderation.actions import audit_purge


@shared_task(name="moderation.purge_audit_events")
def purge_audit_events(dry_run: bool = False) -> dict:
    return job_run(job="purge-audit-events", purge=audit_purge, dry_run=dry_run)


# An erasure (moderation.erasure): acknowledged only when it returns; each task works for
# at most ERASE_TASK_BUDGET (inside the task time limit) and queues the next. A worker
# killed mid-way leaves a stale running erasure that `erasures_resume` (beat, every
# minute) hands to a worker again. Running one twice at once is safe.
ERASE_TASK_BUDGET = timedelta(seconds=240)


@shared_task(name="moderation.erasure_run", acks_late=True, reject_on_worker_lost=True)
def erasure_run(erasure_id: int, batch_size: int | None = None) -> dict:
    from moderation import erasure

    done = erasure.erasure_run(
        erasure_id=erasure_id,
        batch_size=batch_size or settings.SETTLE_ERASE_BATCH_SIZE,
        time_budget=ERASE_TASK_BUDGET,
    )
    if done.state == done.State.RUNNING:
        erasure_run.delay(erasure_id, batch_size)
    return {"erasure": done.pk, "done": done.done, "state": done.state}


@shared_task(name="moderation.erasures_resume")
def erasures_resume() -> list[int]:
    from moderation import erasure

    stale = erasure.erasures_stale()
    for erasure_id in stale:
        erasure_run.delay(erasure_id)
    return stale
