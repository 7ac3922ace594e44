-- A replay (receipts/engines/postgresql.py `replay`), one statement in its own
-- (auto)commit: the function receipts_replay (receipts/sql/receipts_replay.sql) locks
-- and counts the receipt, judges the attempt and logs it, and this statement joins the
-- effect. The join reads the snapshot this statement started with, which holds the
-- effect whenever the receipt's commit came before it began (the caller saw it, or its
-- claim waited for it and rolled back before this).
--
-- The receipt's columns are receipts.statements.RECEIPT_COLUMNS, in that order, then the
-- verdict; tests/receipts/test_statement_files.py holds them to receipts.models.Receipt.
-- The effect's columns and table are filled in for the model asked (the engine reads
-- any model's row, the caller's; receipts imports nothing of the others): every
-- concrete column, as effect_from_row reads them.
SELECT hit.id, hit.state, hit.digests, hit.packed_digests, hit.result_id, hit.first_route,
    hit.attempts, hit.first_seen_at, hit.last_seen_at, hit.receipt_expires_at,
    hit.deleted_at, hit.outcome, {effect_columns}
FROM receipts_replay(
    %(scope)s, %(operation)s, %(request_id)s, %(now)s, CAST(%(digests)s AS jsonb),
    %(packed)s, %(per_field)s, %(deleted_state)s, %(attempt_identity)s, %(route)s,
    %(wait_ms)s, %(commit_quietly)s
) AS hit
LEFT JOIN {effect_table} made ON made.{effect_pk} = hit.result_id
