-- These receipts, to replace (the immediate write transaction is their lock); the last
-- column says whether each was due at now by its expiry. The slot ids is a placeholder a
-- value.
SELECT id, scope, operation, request_id, receipt_expires_at, deleted_at, state, result_id,
    receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE id IN ({ids})
