"""Celery tasks: thin doors onto maintenance.services. Beat runs them (board/settings.py,
CELERY_BEAT_SCHEDULE); `manage.py purge` and the console's `Run purge now` reach them too.
"""

from celery import shared_task

from maintenance import services


@shared_task(name="maintenance.purge_expired_threads")
def purge_expired_threads(dry_run: bool = False) -> dict:
    return services.job_run(
        job="purge-expired-threads", purge=services.purge_expired_threads, dry_run=dry_run
    )


@shared_task(name="maintenance.purge_deletion_records")
def purge_deletion_records(dry_run: bool = False) -> dict:
    return services.job_run(
        job="purge-deletion-records", purge=services.purge_deletion_records, dry_run=dry_run
    )


@shared_task(name="maintenance.purge_tombstones")
def purge_tombstones(dry_run: bool = False) -> dict:
    return services.job_run(
        job="purge-tombstones", purge=services.purge_tombstones, dry_run=dry_run
    )


@shared_task(name="maintenance.purge_attempts")
def purge_attempts(dry_run: bool = False) -> dict:
    return services.job_run(job="purge-attempts", purge=services.purge_attempts, dry_run=dry_run)


@shared_task(name="maintenance.purge_deliveries")
def purge_deliveries(dry_run: bool = False) -> dict:
    return services.job_run(
        job="purge-deliveries", purge=services.purge_deliveries, dry_run=dry_run
    )


# --- Outbound deliveries (maintenance/outbox.py) -------------------------------------------
# No autoretry and no retry on redelivery: the delivery row is the only retry layer, and
# each task checks the row's state before it acts.


@shared_task(name="maintenance.delivery_send")
def delivery_send(delivery_id: str) -> str | None:
    from maintenance import outbox

    delivery = outbox.delivery_run(delivery_id=delivery_id)
    return delivery.state if delivery else None


@shared_task(name="maintenance.deliveries_send")
def deliveries_send(delivery_ids: list[str]) -> int:
    """One message from the write path for all of an entry's deliveries, fanned out
    here so that a slow endpoint never delays another's delivery."""
    from maintenance import outbox

    return sum(outbox.deliveries_enqueue([pk]) for pk in delivery_ids)


@shared_task(name="maintenance.deliveries_sweep")
def deliveries_sweep() -> dict:
    from maintenance import outbox

    return outbox.sweep_job()
