-- The replies of these threads, each with its question. The slot ids is a placeholder
-- a value.
SELECT id, parent_id FROM board_entry WHERE parent_id IN ({ids})
