"""The deliveries' Celery tasks: thin doors onto `sweep` and `rates`. Their names are the
ones beat's schedule (board/settings.py, CELERY_BEAT_SCHEDULE) and the doorbell's messages
use.

No autoretry and no retry on redelivery: the delivery row is the only retry layer, and
each task checks the row's state before it acts.
"""

from celery import shared_task
from django.utils import timezone

from maintenance.deliveries import rates, sweep
from maintenance.deliveries.doorbell import SEND_MANY, SEND_ONE, deliveries_enqueue


@shared_task(name=SEND_ONE)
def delivery_send(delivery_id: str) -> str | None:
    delivery = sweep.delivery_run(delivery_id=delivery_id)
    return delivery.state if delivery else None


@shared_task(name=SEND_MANY)
def deliveries_send(delivery_ids: list[str]) -> int:
    """One message from the write path for all of an entry's deliveries, fanned out
    here so that a slow endpoint never delays another's delivery."""
    return sum(deliveries_enqueue([pk]) for pk in delivery_ids)


@shared_task(name="maintenance.deliveries_sweep")
def deliveries_sweep() -> dict:
    return sweep.sweep_job()


@shared_task(name="maintenance.deliveries_roll_up")
def deliveries_roll_up() -> dict:
    rolled = rates.endpoint_rates_roll_up(now=timezone.now())
    return {"since": rolled.since.isoformat(), "minutes": rolled.minutes, "sends": rolled.sends}
