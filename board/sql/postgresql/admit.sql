-- The admission in ONE statement (board/posting/engines/postgresql.py `admit`): the
-- caller read and the counters counted, the overall take only for an admitted caller
-- without a committed receipt, by the function board_post_admit
-- (board/sql/board_post_admit.sql), whose plan PostgreSQL keeps per server connection,
-- with or without a pooler between. The function decides in SQL what
-- board/posting/engines/sqlite.py `admit` decides in Python with board/posting/callers.py
-- and limits.py (tests/board/test_rules.py compares them).
--
-- The columns in this order: board.posting.statements.policy_and_caller reads the first
-- eleven (the posting read's), then the caller's rules as the SQL decided them.
--
-- commit_quietly: the counters are bookkeeping, so outside a caller's transaction they
-- commit without waiting for the WAL flush (the condition and the reason are
-- receipts.engines.postgresql.commit_quietly's; the board's statement reads the
-- condition itself, so a post visits receipts once, to write).
SELECT paused, pause_reason, source_hourly_limit, overall_hourly_limit, token_id,
    last_used_at, principal_id, name, hourly_limit, entry_retention, principal_key, seen,
    source, counted
FROM board_post_admit(
    %(principal_prefix)s, %(presented_hash)s, %(address_source)s, %(anonymous_scope)s,
    %(post_operation)s, %(post_request_id)s, %(counted_hour)s, %(overall_source)s,
    CAST(%(source_default_limit)s AS bigint), CAST(%(overall_default_limit)s AS bigint),
    %(anonymous_admitted)s, %(commit_quietly)s
)
