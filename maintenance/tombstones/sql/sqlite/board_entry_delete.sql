-- Entries by id, without the cascade collector of the ORM, which reads every row and its
-- relations first: the purge already decided what goes. The slot ids is a placeholder a
-- value (SQLite has no array parameter).
DELETE FROM board_entry WHERE id IN ({ids})
