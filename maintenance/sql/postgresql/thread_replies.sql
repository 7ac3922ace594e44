-- The replies of these threads, each with its question.
SELECT id, parent_id FROM board_entry WHERE parent_id = ANY(%(ids)s::bigint[])
