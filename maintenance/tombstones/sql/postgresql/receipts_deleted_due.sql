-- The deletion purge's walk: deleted receipts whose deleted_at is as old as
-- deleted_before (now minus the deletion policy in force at this purge), oldest deletion
-- first, locked, skipping rows another transaction holds (a retry counting its attempt,
-- another purge); past the last (deleted_at, id) the run looked at (the first batch
-- from before the oldest).
-- By deleted_at, not by the expiry the delete stored: a policy shortened since then acts
-- at this purge, and one lengthened keeps the receipt (SPEC 8.2). Served by the partial
-- index receipt_deleted.
-- A receipt whose entry's thread a hold covers is left out by the database: the slot
-- thread_not_held is the holds' rule (board.retention.holds.thread_not_held_sql) of
-- the thread COALESCE(board_entry.parent_id, board_entry.id), written once for every
-- statement that honours holds.
-- Columns as in receipts_due.sql; the limit is a slot, as there.
SELECT id, NULL, NULL, NULL, receipt_expires_at::text, deleted_at::text, state, result_id,
    CASE WHEN deleted_at IS NULL THEN receipt_expires_at <= %(now)s
        ELSE deleted_at <= %(deleted_before)s END
FROM receipts_receipt
WHERE operation = %(operation)s AND deleted_at IS NOT NULL
    AND deleted_at <= %(deleted_before)s AND state = %(deleted)s
    AND NOT EXISTS (SELECT 1 FROM board_entry WHERE board_entry.id = receipts_receipt.result_id
        AND NOT {thread_not_held})
    AND deleted_at >= %(after_moment)s AND (deleted_at > %(after_moment)s OR id > %(after_id)s)
ORDER BY receipts_receipt.deleted_at, receipts_receipt.id LIMIT {limit} FOR UPDATE SKIP LOCKED
