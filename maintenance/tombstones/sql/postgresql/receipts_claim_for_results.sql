-- Lock the receipts of these results, skipping those another transaction holds (a retry
-- counting its attempt, another purge): never waited for. The last column says whether
-- each is due at now, a deleted one by its deleted_at against deleted_before, as in
-- receipts_deleted_due.sql. No identity and no moments: entomb.sql reads them from the
-- rows it deletes. receipts_of_results_count.sql then finds what was skipped.
SELECT id, NULL, NULL, NULL, NULL, NULL, state, result_id,
    CASE WHEN deleted_at IS NULL THEN receipt_expires_at <= %(now)s
        ELSE deleted_at <= %(deleted_before)s END
FROM receipts_receipt
WHERE operation = %(operation)s AND result_id = ANY(%(result_ids)s::bigint[])
FOR UPDATE SKIP LOCKED
