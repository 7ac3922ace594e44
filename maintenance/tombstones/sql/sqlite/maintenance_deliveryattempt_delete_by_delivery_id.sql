-- The attempts of these deliveries, by their delivery's index, as board_entry_delete.sql deletes entries.
DELETE FROM maintenance_deliveryattempt WHERE delivery_id IN ({ids})
