-- Lock these receipts, leaving out any another transaction holds; the last column says
-- whether each was due at now by its expiry. No identity and no moments: entomb.sql
-- reads them from the rows it deletes.
SELECT id, NULL, NULL, NULL, NULL, NULL, state, result_id, receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE id = ANY(%(ids)s::bigint[])
FOR UPDATE SKIP LOCKED
