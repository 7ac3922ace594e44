"""Retention of settled deliveries (SPEC 9): deliveries in a final state, with their
attempts, go after the `delivery` policy; `outcome_unknown` ones wait for an operator.
Batched and recorded like every purge (maintenance.purges.run_batches)."""

from datetime import datetime, timedelta

from board.retention import policies as retention
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from maintenance.purges import Batch, PurgeResult, purge_time_budget, run_batches
from maintenance.tombstones import purge as receipt_purge


def purge_deliveries(
    *,
    now: datetime,
    batch_size: int,
    time_budget: timedelta | None = None,
    dry_run: bool = False,
) -> PurgeResult:
    """Remove deliveries in a final state settled more than SETTLE_DELIVERY_RETENTION ago,
    with their attempts. `outcome_unknown` ones stay until an operator settles them."""
    delivery_retention = retention.policy_in_force(retention.DELIVERY, fresh=True).duration

    def batch(after) -> Batch:
        old = Delivery.objects.filter(
            state__in=Delivery.FINAL,
            settled_at__lt=now - delivery_retention,
        ).order_by("settled_at")[:batch_size]
        ids = list(old.select_for_update(skip_locked=True).values_list("id", flat=True))
        # Plain DELETEs by key (the attempts by their delivery's index): the ORM's delete
        # of a delivery collects it and its attempts row by row before deleting them.
        attempts = receipt_purge.delete_where(DeliveryAttempt, "delivery_id", ids)
        removed = receipt_purge.delete_ids(Delivery, ids)
        return Batch(
            counts={"deliveries": removed, "delivery_attempts": attempts},
            more=len(ids) == batch_size,
        )

    return run_batches(
        job="purge-deliveries",
        keys=["deliveries", "delivery_attempts"],
        batch=batch,
        time_budget=purge_time_budget(time_budget),
        dry_run=dry_run,
    )
