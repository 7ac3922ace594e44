-- Deliveries by id, as board_entry_delete.sql deletes entries.
DELETE FROM maintenance_delivery WHERE id IN ({ids})
