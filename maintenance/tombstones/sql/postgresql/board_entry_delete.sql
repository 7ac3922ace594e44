-- Entries by id, without the cascade collector of the ORM, which reads every row and its
-- relations first: the purge already decided and locked what goes. A list is one array
-- parameter, as in receipts_for_results.sql.
DELETE FROM board_entry WHERE id = ANY(%(ids)s::bigint[])
