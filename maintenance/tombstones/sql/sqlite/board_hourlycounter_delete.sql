-- Hourly rate-limit counters by id, as board_entry_delete.sql deletes entries.
DELETE FROM board_hourlycounter WHERE id IN ({ids})
