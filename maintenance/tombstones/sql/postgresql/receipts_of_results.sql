-- The receipts of these results and their results, locked or not: those the claim did
-- not lock are held by another transaction, and their threads wait for the next run.
SELECT id, result_id
FROM receipts_receipt
WHERE operation = %(operation)s AND result_id = ANY(%(result_ids)s::bigint[])
