-- Attempts by id, as board_entry_delete.sql deletes entries.
DELETE FROM receipts_attempt WHERE id IN ({ids})
