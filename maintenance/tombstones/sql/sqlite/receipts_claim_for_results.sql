-- The receipts of these results, to replace (nothing to lock: the immediate write
-- transaction excludes everyone else, so none is skipped). The last column says whether
-- each is due at now, a deleted one by its deleted_at against deleted_before. The slot
-- result_ids is a placeholder a value.
SELECT id, scope, operation, request_id, receipt_expires_at, deleted_at, state, result_id,
    CASE WHEN deleted_at IS NULL THEN receipt_expires_at <= %(now)s
        ELSE deleted_at <= %(deleted_before)s END
FROM receipts_receipt
WHERE operation = %(operation)s AND (
    -- A receipt's id is its result's, found by the primary key; one made before, whose
    -- id differs, by receipt_result_id_older, whose predicate this arm repeats.
    id IN ({result_ids}) AND result_id IN ({result_ids})
    OR result_id IN ({result_ids}) AND result_id <> id
)
