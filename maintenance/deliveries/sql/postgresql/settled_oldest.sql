-- The deliveries settled in a final state before settled_before, oldest first, a batch
-- of the limit (a slot, written into the text), locked, skipping those another
-- transaction holds. outcome_unknown is not final: those wait for an operator.
-- The states are the condition of the partial index delivery_final_settled as its
-- migration wrote it, constants of the model (Delivery.FINAL; a test holds them equal).
SELECT id FROM maintenance_delivery
WHERE state IN ('succeeded', 'failed', 'cancelled') AND settled_at < %(settled_before)s
ORDER BY settled_at LIMIT {limit} FOR UPDATE SKIP LOCKED
