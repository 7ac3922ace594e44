-- The deletion purge's walk, as ../postgresql/receipts_deleted_due.sql says, without
-- locks (the immediate write transaction excludes everyone else); past the last
-- (deleted_at, id) the run looked at. The slot thread_not_held is the holds' rule, as
-- there.
SELECT id, scope, operation, request_id, receipt_expires_at, deleted_at, state, result_id,
    CASE WHEN deleted_at IS NULL THEN receipt_expires_at <= %(now)s
        ELSE deleted_at <= %(deleted_before)s END
FROM receipts_receipt
WHERE operation = %(operation)s AND deleted_at IS NOT NULL
    AND deleted_at <= %(deleted_before)s AND state = %(deleted)s
    AND NOT EXISTS (SELECT 1 FROM board_entry WHERE board_entry.id = receipts_receipt.result_id
        AND NOT {thread_not_held})
    AND deleted_at >= %(after_moment)s AND (deleted_at > %(after_moment)s OR id > %(after_id)s)
ORDER BY receipts_receipt.deleted_at, receipts_receipt.id LIMIT {limit}
