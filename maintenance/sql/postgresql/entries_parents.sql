-- These entries and their question (NULL for a question): the threads purge finds the
-- threads of the receipts it walks. Plain SQL, as for every statement of a purge batch:
-- a purge moves thousands of rows a second, and the cost of the ORM a row was most of
-- the time. A list is one array parameter, its text cast on the server.
SELECT id, parent_id FROM board_entry WHERE id = ANY(%(ids)s::bigint[])
