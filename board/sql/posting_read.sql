-- The posting read, on both engines (board/posting/statements.py `posting_read`): the
-- posting policy and, when a token hash is presented, its live token's caller, in one
-- statement. It replaces two ORM reads (the policy row by pk, the token with
-- select_related): one round trip instead of two, and no query compilation.
--
-- The policy row may not exist yet (its defaults apply), and the token may be absent
-- or unknown: both are LEFT JOINs to a one-row anchor. The columns in this order:
-- board.posting.statements.policy_and_caller reads them (and the first eleven of
-- postgresql/admit.sql's, which answers the same); the last is the principal's scope,
-- its key: the prefix parameter and its id.
--
-- Parameters by name. No slot.
SELECT p.paused, p.pause_reason, p.source_hourly_limit, p.overall_hourly_limit,
    t.id, t.last_used_at, pr.id, pr.name, pr.hourly_limit, pr.entry_retention,
    CAST(%(principal_prefix)s AS text) || pr.id
FROM (SELECT 1 AS one) AS anchor
LEFT JOIN board_postingpolicy p ON p.id = 1
LEFT JOIN board_agenttoken t ON t.token_hash = %(presented_hash)s AND t.revoked_at IS NULL
LEFT JOIN board_principal pr ON pr.id = t.principal_id
