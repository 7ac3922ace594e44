-- The outbox: one accepted delivery per enabled endpoint, the columns of
-- outbox._OUTBOX_COLUMNS in their order; the receipts engine writes them with the new
-- entry, linked by its id, in the entry's own statement. Parameters, in order: the
-- state, unanswered, lookup_due, next_attempt_at, deadline_at, created_at, enabled.
-- A new delivery's id is a random (version 4) UUID.
SELECT gen_random_uuid(), id, %s, 0, %s, %s, '', %s, %s, %s FROM maintenance_endpoint WHERE enabled = %s
