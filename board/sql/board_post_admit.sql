-- A post's admission on PostgreSQL (board/posting/engines/postgresql.py `admit`): who
-- calls (the token read), the source counted and the overall take made provisionally,
-- in one statement whose plan PostgreSQL keeps per server connection, behind a pooler
-- too. SQLite runs the same rules in Python (board/posting/engines/sqlite.py);
-- tests/board/test_rules.py compares the two on generated input.
--
-- Applied by version (receipts/function_file.py): a comment is edited freely; a change to
-- the code raises the version below and comes with a new migration of the board that
-- applies it (board/migrations/0006_post_admit_from_file.py shows how), which DROPs the
-- function first where its columns change.
-- version: 1

CREATE OR REPLACE FUNCTION board_post_admit(
    principal_prefix text, presented_hash text, address_source text, anonymous_scope text,
    post_operation text, post_request_id uuid, counted_hour timestamptz,
    overall_source text, source_default_limit bigint, overall_default_limit bigint,
    anonymous_admitted boolean, commit_quietly boolean
) RETURNS TABLE (
    paused boolean, pause_reason text, source_hourly_limit integer,
    overall_hourly_limit integer, token_id bigint, last_used_at timestamptz,
    principal_id bigint, name text, hourly_limit integer, entry_retention integer,
    principal_key text, seen boolean, source text, source_limit bigint,
    overall_limit bigint, admitted boolean, counted text[]
) LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
#variable_conflict use_column
BEGIN
    -- The counters need no durable commit (receipts/engines/postgresql.py, commit_quietly);
    -- inside a caller's transaction the commit is the caller's.
    IF commit_quietly THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    RETURN QUERY
    WITH presented AS (
        SELECT p.paused, p.pause_reason, p.source_hourly_limit, p.overall_hourly_limit,
            t.id AS token_id, t.last_used_at, pr.id AS principal_id, pr.name,
            pr.hourly_limit, pr.entry_retention,
            principal_prefix || pr.id AS principal_key
        FROM (SELECT 1 AS one) AS anchor
        LEFT JOIN board_postingpolicy p ON p.id = 1
        LEFT JOIN board_agenttoken t
            ON t.token_hash = presented_hash AND t.revoked_at IS NULL
        LEFT JOIN board_principal pr ON pr.id = t.principal_id
    ),
    caller AS (
        SELECT presented.*,
            COALESCE(principal_key, address_source) AS source,
            COALESCE(hourly_limit, source_hourly_limit, source_default_limit)
                AS source_limit,
            COALESCE(overall_hourly_limit, overall_default_limit) AS overall_limit,
            (principal_key IS NOT NULL OR anonymous_admitted) AS admitted,
            EXISTS (
                SELECT 1 FROM receipts_receipt
                WHERE scope = COALESCE(principal_key, anonymous_scope)
                    AND operation = post_operation AND request_id = post_request_id
            ) AS seen
        FROM presented
    ),
    counted AS (
        INSERT INTO board_hourlycounter AS c (source, hour, count)
        SELECT wanted.source, counted_hour, 1
        FROM caller, LATERAL (VALUES (caller.source, caller.source_limit),
            (overall_source, caller.overall_limit)) AS wanted (source, lim)
        WHERE wanted.lim > 0 AND (wanted.source = caller.source
            OR (caller.admitted AND NOT caller.seen))
        ON CONFLICT (source, hour) DO UPDATE SET count = c.count + 1
            WHERE c.count < (SELECT CASE WHEN c.source = caller.source
                THEN caller.source_limit ELSE caller.overall_limit END FROM caller)
        RETURNING c.source
    )
    SELECT caller.paused, caller.pause_reason::text, caller.source_hourly_limit,
        caller.overall_hourly_limit, caller.token_id, caller.last_used_at,
        caller.principal_id, caller.name::text, caller.hourly_limit,
        caller.entry_retention, caller.principal_key, caller.seen, caller.source,
        caller.source_limit, caller.overall_limit, caller.admitted,
        array(SELECT counted.source::text FROM counted)
    FROM caller;
END
$$;
