-- The lowest id among the 1,000 entries just below %(below)s whose
-- created_at is at or after %(moment)s: an entry the halving stepped
-- over because its id and its creation time disagree (board/selectors.py).
-- One backward walk of the primary key, 1,000 rows at most (a literal, so a
-- prepared statement keeps the plan that walks it).
SELECT min(id) FROM (
    SELECT id, created_at FROM board_entry
    WHERE id < %(below)s
    ORDER BY id DESC LIMIT 1000
) AS near
WHERE created_at >= %(moment)s
