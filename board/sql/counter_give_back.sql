-- A provisional take returned (board/posting/statements.py `counter_give_back`), on both
-- engines: its own short statement, like the take (counter_take.sql); never below zero.
--
-- Parameters by name. No slot.
UPDATE board_hourlycounter SET count = count - 1
WHERE source = %(source)s AND hour = %(hour)s AND count > 0
