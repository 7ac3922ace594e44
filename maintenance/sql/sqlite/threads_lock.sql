-- Of these questions, those no hold covers (see ../postgresql/threads_lock.sql; nothing
-- to lock: the immediate write transaction excludes everyone else). The slot ids is a
-- placeholder a value.
SELECT id FROM board_entry
WHERE id IN ({ids}) AND type = 'question' AND {thread_not_held}
