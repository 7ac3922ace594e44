-- These entries and their question (NULL for a question), as ../postgresql/ says; the
-- slot ids is a placeholder a value (SQLite has no array parameter).
SELECT id, parent_id FROM board_entry WHERE id IN ({ids})
