-- The threads purge's walk: receipts due at now, oldest expiry first, a batch of the
-- limit, past the last (receipt_expires_at, id) the run looked at (the first batch from
-- before the oldest), so a run walks past receipts it had to leave (a thread not yet
-- wholly expired) instead of rereading them every batch; the keyset's first condition is
-- the one the expiry index can start from.
-- Not locked: the thread, not the receipt, is the unit two runs split.
-- A deleted receipt is left out until its deleted_at is as old as deleted_before (now
-- minus the deletion policy in force at this purge): its expiry, kept as promised, comes
-- long before its deletion record may go, and a walk that met it every run would spend
-- its batches on receipts it cannot take.
-- The columns of purge.ReceiptRow: the identity stays in the database (entomb.sql makes
-- the tombstones from the receipt rows themselves); the moments as text, parsed in
-- Python only when needed. The last column says whether the receipt was due at now by
-- its receipt_expires_at (fixed at the write: a promise); the walk reads only the
-- results and the keyset of these rows, and the claim of their threads says which are
-- due (receipts_claim_for_results.sql).
-- ORDER BY is qualified: a bare name means the output column first, here the text of
-- receipt_expires_at, which sorted every due row as text instead of walking the expiry
-- index. The limit is written into the text (a slot): a parameter would let a prepared
-- statement take a generic plan.
SELECT id, NULL, NULL, NULL, receipt_expires_at::text, deleted_at::text, state, result_id,
    receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE operation = %(operation)s AND receipt_expires_at <= %(now)s
    AND (deleted_at IS NULL OR deleted_at <= %(deleted_before)s)
    AND receipt_expires_at >= %(after_moment)s
    AND (receipt_expires_at > %(after_moment)s OR id > %(after_id)s)
ORDER BY receipts_receipt.receipt_expires_at, receipts_receipt.id LIMIT {limit}
