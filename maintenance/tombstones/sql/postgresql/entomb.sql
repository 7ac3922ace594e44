-- Replace receipts by tombstones in one statement: the receipts are deleted and their
-- tombstones made from what the DELETE returns, so a receipt's identity and moments
-- never travel to Python. The rules are purge.receipts_entomb's (one tombstone per
-- identity, written over a stale one; its reason; its expiry), here in SQL; SQLite runs
-- them in Python (receipts.fingerprint.Identity.key, receipts.models.tombstone_expiry_day,
-- purge.ReceiptRow.tombstone), and tests/receipts/test_tombstone_rules.py compares the
-- two. In SQL:
-- - the key: the first 16 bytes of the sha256 of scope, operation and request_id
--   joined by NUL bytes, as a uuid;
-- - the day: in UTC, one microsecond short of a day added, then the date: a moment at
--   midnight keeps its day, any later one gets the next.
-- A list is one array parameter, as in receipts_for_results.sql.
WITH gone AS (
    DELETE FROM receipts_receipt WHERE id = ANY(%(ids)s::bigint[])
    RETURNING scope, operation, request_id, state, receipt_expires_at, deleted_at
)
INSERT INTO receipts_tombstone (key, reason, expires_at)
SELECT
    encode(substring(sha256(
        convert_to(scope, 'UTF8') || '\x00'::bytea
        || convert_to(operation, 'UTF8') || '\x00'::bytea
        || convert_to(request_id::text, 'UTF8')
    ) FROM 1 FOR 16), 'hex')::uuid,
    CASE WHEN state = %(deleted_state)s THEN %(deleted)s ELSE %(expired)s END,
    ((CASE WHEN state = %(deleted_state)s AND deleted_at IS NOT NULL
        THEN GREATEST(receipt_expires_at, deleted_at + %(deletion)s)
        ELSE receipt_expires_at END + %(retention)s)
        AT TIME ZONE 'UTC' + interval '1 day' - interval '1 microsecond')::date
FROM gone
ORDER BY 1
ON CONFLICT (key) DO UPDATE
    SET reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at
