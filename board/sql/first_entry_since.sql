-- The first entry whose created_at is at or after %(moment)s, found by halving the range
-- of ids (board/selectors.py says why): one statement, so one snapshot,
-- for PostgreSQL and SQLite alike.
--
-- Each row of `halving` is a range [low, high) that holds the answer's id, or high is
-- one past the newest id; and `probe` is the first entry at or after its middle, its id
-- negated when that entry's created_at is at or after the moment. A negative probe
-- moves high down to the middle; a positive one moves low past the probe, over any gap
-- in the ids below it. Each probe is one descent of the primary key from the middle,
-- about log2(newest - oldest id) of them. (`board_entry.id` in ORDER BY: PostgreSQL names
-- the CASE `id` after its ELSE, and a bare `id` would order by the probe's sign.) When
-- low meets high, the last probe, at low, is the answer; none when low is past the
-- newest entry.
WITH RECURSIVE halving(low, high, probe) AS (
    -- The whole range, and a probe just below it, as if one had been read there: the
    -- first step keeps the range and probes its middle.
    SELECT low, high, low - 1
    FROM (
        SELECT (SELECT min(id) FROM board_entry) AS low,
               (SELECT max(id) FROM board_entry) + 1 AS high
    ) AS ends
    UNION ALL
    -- The recursive part may name `halving` only in its own FROM (both engines), so the
    -- next range is written out where the next middle needs it.
    SELECT
        CASE WHEN probe < 0 THEN low ELSE probe + 1 END,
        CASE WHEN probe < 0 THEN (low + high) / 2 ELSE high END,
        (
            SELECT CASE WHEN created_at >= %(moment)s THEN -id ELSE id END AS found
            FROM board_entry
            WHERE id >= (CASE WHEN probe < 0 THEN low ELSE probe + 1 END
                         + CASE WHEN probe < 0 THEN (low + high) / 2 ELSE high END) / 2
            ORDER BY board_entry.id LIMIT 1
        )
    FROM halving
    WHERE low < high AND probe IS NOT NULL
)
SELECT -probe FROM halving WHERE low >= high AND probe < 0
