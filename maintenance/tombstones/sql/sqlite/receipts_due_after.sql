-- receipts_due.sql past the last (receipt_expires_at, id) the run looked at, so a run
-- walks past receipts it had to leave instead of rereading them every batch. The
-- keyset's first condition is the one the expiry index can start from.
SELECT id, scope, operation, request_id, receipt_expires_at, deleted_at, state, result_id,
    receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE operation = %(operation)s AND receipt_expires_at <= %(now)s
    AND (deleted_at IS NULL OR deleted_at <= %(deleted_before)s)
    AND receipt_expires_at >= %(after_moment)s
    AND (receipt_expires_at > %(after_moment)s OR id > %(after_id)s)
ORDER BY receipts_receipt.receipt_expires_at, receipts_receipt.id LIMIT {limit}
