-- The receipts of these results, not locked; the last column says whether each was due
-- at now by its expiry. A list is one array parameter, its text ({1,2,3}) cast on the
-- server: far cheaper than the driver adapting thousands of values one by one, and it
-- plans once.
SELECT id, NULL, NULL, NULL, receipt_expires_at::text, deleted_at::text, state, result_id,
    receipt_expires_at <= %(now)s
FROM receipts_receipt
WHERE operation = %(operation)s AND (
    -- A receipt's id is its result's, found by the primary key; one made before, whose
    -- id differs, by receipt_result_id_older, whose predicate this arm repeats.
    id = ANY(%(result_ids)s::bigint[]) AND result_id = ANY(%(result_ids)s::bigint[])
    OR result_id = ANY(%(result_ids)s::bigint[]) AND result_id <> id
)
