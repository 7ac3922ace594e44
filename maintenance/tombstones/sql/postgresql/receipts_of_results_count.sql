-- How many receipts these results have, locked or not: when it is the number
-- receipts_claim_for_results.sql locked, nothing was skipped, and this one cheap query
-- is all the usual case costs (receipts_of_results.sql otherwise names what was).
SELECT count(*)
FROM receipts_receipt
WHERE operation = %(operation)s AND result_id = ANY(%(result_ids)s::bigint[])
