-- Tombstones by key, as board_entry_delete.sql deletes entries.
DELETE FROM receipts_tombstone WHERE key IN ({ids})
