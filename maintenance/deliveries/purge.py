"""Retention of settled deliveries (SPEC 9): deliveries in a final state, with their
attempts, go after the `delivery` policy; `outcome_unknown` ones wait for an operator.
Batched and recorded like every purge (maintenance.batches.run_batches)."""

from collections.abc import Callable
from datetime import datetime, timedelta

from board.retention import policies as retention
from maintenance.batches import Batch, PurgeResult, purge_time_budget, run_batches
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from maintenance.tombstones import purge as receipt_purge

# The statement that picks a batch (its why is in the file).
SETTLED_OLDEST = "maintenance/deliveries/sql/{engine}/settled_oldest.sql"


def purge_deliveries(
    *,
    now: datetime,
    batch_size: int,
    time_budget: timedelta | None = None,
    dry_run: bool = False,
    enough: Callable[[dict[str, int]], bool] | None = None,
) -> PurgeResult:
    """Remove deliveries in a final state settled more than SETTLE_DELIVERY_RETENTION ago,
    with their attempts. `outcome_unknown` ones stay until an operator settles them."""
    delivery_retention = retention.policy_in_force(retention.DELIVERY, fresh=True).duration

    def batch(after) -> Batch:
        ids = receipt_purge.ids_oldest(
            SETTLED_OLDEST,
            {"settled_before": receipt_purge.sql_moment(now - delivery_retention)},
            limit=batch_size,
        )
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
        enough=enough,
    )
