-- One more on a source's hourly counter (SPEC 5.1 steps 2 and 5), on both engines
-- (board/posting/statements.py `counter_take`, which says why a counter is its own
-- short statement): a conditional upsert, one more unless the count has reached the
-- limit; a refused take is not counted and returns no row.
--
-- Parameters by name, the limit among them. No slot.
INSERT INTO board_hourlycounter AS c (source, hour, count)
VALUES (%(source)s, %(hour)s, 1)
ON CONFLICT (source, hour) DO UPDATE SET count = c.count + 1 WHERE c.count < %(limit)s
RETURNING count
