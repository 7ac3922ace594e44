-- The receipts of these results and their results, locked or not: those the claim did
-- not lock are held by another transaction, and their threads wait for the next run.
SELECT id, result_id
FROM receipts_receipt
WHERE operation = %(operation)s AND (
    -- A receipt's id is its result's, found by the primary key; one made before, whose
    -- id differs, by receipt_result_id_older, whose predicate this arm repeats.
    id = ANY(%(result_ids)s::bigint[]) AND result_id = ANY(%(result_ids)s::bigint[])
    OR result_id = ANY(%(result_ids)s::bigint[]) AND result_id <> id
)
