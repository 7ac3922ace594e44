-- The receipts of these results; the last column says whether each was due at now by
-- its expiry. SQLite has no array parameter: the slot result_ids is a placeholder a
-- value.
SELECT id, scope, operation, request_id, receipt_expires_at, deleted_at, state, result_id,
    receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE operation = %(operation)s AND result_id IN ({result_ids})
