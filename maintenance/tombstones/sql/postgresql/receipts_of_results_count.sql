-- How many receipts these results have, locked or not: when it is the number
-- receipts_claim_for_results.sql locked, nothing was skipped, and this one cheap query
-- is all the usual case costs (receipts_of_results.sql otherwise names what was).
SELECT count(*)
FROM receipts_receipt
WHERE operation = %(operation)s AND (
    -- A receipt's id is its result's, found by the primary key; one made before, whose
    -- id differs, by receipt_result_id_older, whose predicate this arm repeats.
    id = ANY(%(result_ids)s::bigint[]) AND result_id = ANY(%(result_ids)s::bigint[])
    OR result_id = ANY(%(result_ids)s::bigint[]) AND result_id <> id
)
