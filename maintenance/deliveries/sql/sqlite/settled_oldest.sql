-- The deliveries settled in a final state before settled_before, oldest first, a batch
-- of the limit (a slot). The states are the condition of the partial index
-- delivery_final_settled as its migration wrote it (Delivery.FINAL; a test holds them
-- equal): SQLite uses a partial index only when the query repeats its condition, and a
-- state IN list of parameters is not that (it read every delivery and sorted them:
-- 100 ms at 200,000). The index is named: with no statistics for an empty partial index
-- the planner takes a larger one whose condition the query also implies.
SELECT id FROM maintenance_delivery INDEXED BY delivery_final_settled
WHERE state IN ('succeeded', 'failed', 'cancelled') AND settled_at < %(settled_before)s
ORDER BY settled_at LIMIT {limit}
