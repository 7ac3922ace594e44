-- A replay on SQLite (receipts/engines/sqlite.py `replay`): the receipt counted (one
-- more attempt, last seen now) and read, in the immediate transaction that also logs
-- the attempt (attempt.sql), so nobody changes the receipt or the effect between this
-- read and the answer. No row: the receipt is gone (purged).
--
-- The columns returned are receipts.statements.RECEIPT_COLUMNS, in that order (what
-- receipt_from_row reads); tests/receipts/test_statement_files.py holds them to
-- receipts.models.Receipt.
--
-- Parameters by name. No slot.
UPDATE receipts_receipt SET attempts = attempts + 1, last_seen_at = %(now)s
WHERE scope = %(scope)s AND operation = %(operation)s AND request_id = %(request_id)s
RETURNING id, state, digests, packed_digests, result_id, first_route, attempts,
    first_seen_at, last_seen_at, receipt_expires_at, deleted_at
