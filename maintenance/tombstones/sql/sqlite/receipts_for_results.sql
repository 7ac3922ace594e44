-- The receipts of these results; the last column says whether each was due at now by
-- its expiry. SQLite has no array parameter: the slot result_ids is a placeholder a
-- value.
SELECT id, scope, operation, request_id, receipt_expires_at, deleted_at, state, result_id,
    receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE operation = %(operation)s AND (
    -- A receipt's id is its result's, found by the primary key; one made before, whose
    -- id differs, by receipt_result_id_older, whose predicate this arm repeats.
    id IN ({result_ids}) AND result_id IN ({result_ids})
    OR result_id IN ({result_ids}) AND result_id <> id
)
