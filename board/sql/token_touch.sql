-- A token's last use recorded (board/posting/statements.py `token_touch`, which the
-- post calls at most once a minute a token), on both engines, in place of a queryset
-- update.
--
-- Parameters by name. No slot.
UPDATE board_agenttoken SET last_used_at = %(used_at)s WHERE id = %(token_id)s
