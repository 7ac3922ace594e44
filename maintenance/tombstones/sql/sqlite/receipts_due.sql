-- The threads purge's walk: receipts due at now, oldest expiry first, a batch of the
-- limit, past the last (receipt_expires_at, id) the run looked at, as on PostgreSQL.
-- Not locked: the immediate write transaction already excludes everyone else.
-- A deleted receipt is left out until its deleted_at is as old as deleted_before (now
-- minus the deletion policy in force at this purge), as on PostgreSQL (see
-- ../postgresql/receipts_due.sql for that and for the last column).
-- The columns of purge.ReceiptRow, the identity and the moments always: SQLite has no
-- sha256, so the tombstones are made in Python from them.
-- The limit is written into the text (a slot), as on PostgreSQL.
SELECT id, scope, operation, request_id, receipt_expires_at, deleted_at, state, result_id,
    receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE operation = %(operation)s AND receipt_expires_at <= %(now)s
    AND (deleted_at IS NULL OR deleted_at <= %(deleted_before)s)
    AND receipt_expires_at >= %(after_moment)s
    AND (receipt_expires_at > %(after_moment)s OR id > %(after_id)s)
ORDER BY receipts_receipt.receipt_expires_at, receipts_receipt.id LIMIT {limit}
