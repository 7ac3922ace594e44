-- The highest id among the 1,000 entries from %(start)s up whose created_at is
-- before %(moment)s: an entry the halving stepped over because its id and its creation
-- time disagree (board/selectors.py). One forward walk of the primary key,
-- 1,000 rows at most.
SELECT max(id) FROM (
    SELECT id, created_at FROM board_entry
    WHERE id >= %(start)s
    ORDER BY id LIMIT 1000
) AS near
WHERE created_at < %(moment)s
