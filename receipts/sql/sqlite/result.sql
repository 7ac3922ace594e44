-- The claimed receipt's result on SQLite (receipts/engines/sqlite.py `write`): the
-- effect's new id, set after effect.sql's INSERT in the same transaction.
-- (PostgreSQL's claim reserves the id first and writes the receipt once.)
--
-- Parameters by name. No slot.
UPDATE receipts_receipt SET result_id = %(result_id)s WHERE id = %(receipt_id)s
