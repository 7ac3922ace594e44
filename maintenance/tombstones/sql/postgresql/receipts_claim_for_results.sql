-- Lock the receipts of these results, skipping those another transaction holds (a retry
-- counting its attempt, another purge): never waited for. The last column says whether
-- each is due at now: a live one once its receipt_expires_at has passed (fixed at the
-- write: a promise), a deleted one once its deleted_at is as old as deleted_before (now
-- minus the deletion policy in force at this purge), whatever expiry the delete
-- reckoned with (SPEC 8.1: the deletion policy applies at the next purge, shortened or
-- lengthened). No identity and no moments: entomb.sql reads them from the
-- rows it deletes. receipts_of_results_count.sql then finds what was skipped.
SELECT id, NULL, NULL, NULL, NULL, NULL, state, result_id,
    CASE WHEN deleted_at IS NULL THEN receipt_expires_at <= %(now)s
        ELSE deleted_at <= %(deleted_before)s END
FROM receipts_receipt
WHERE operation = %(operation)s AND (
    -- A receipt's id is its result's, found by the primary key; one made before, whose
    -- id differs, by receipt_result_id_older, whose predicate this arm repeats.
    id = ANY(%(result_ids)s::bigint[]) AND result_id = ANY(%(result_ids)s::bigint[])
    OR result_id = ANY(%(result_ids)s::bigint[]) AND result_id <> id
)
FOR UPDATE SKIP LOCKED
