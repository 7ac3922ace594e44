-- A replay's bookkeeping on PostgreSQL (receipts/engines/postgresql.py `replay`): lock
-- and count the receipt, judge the attempt, log it, in one statement whose plan
-- PostgreSQL keeps per server connection, behind a pooler too. SQLite runs the same
-- rules in Python (receipts/engines/sqlite.py, receipts.services._verdict);
-- tests/receipts/test_rules.py compares them.
--
-- Applied by version (receipts/function_file.py): a comment is edited freely; a change to
-- the code raises the version below and comes with a new migration of receipts that
-- applies it (receipts/migrations/0010_request_digest.py shows how), which DROPs the
-- function first where its parameters or columns change.
--
-- The request's digests come in every form a receipt may keep them (receipts/
-- fingerprint.py): replay_packed as new receipts keep them (a version byte, the
-- request's digest, a tag a field), replay_per_field as receipts made before that keep
-- them (16 bytes a field, no version byte), replay_digests as JSON as the oldest
-- receipts keep them; each receipt is compared in its own form, so a retry of a receipt
-- made before replays or conflicts as it did, and in this one statement (a second round
-- trip for the older forms would cost every replay more than the bytes they add). A
-- packed value whose length is a multiple of 16 is the per-field form (the versioned
-- form's length is odd); of the versioned form, the version byte and the request's
-- digest decide (the tags only name a conflict's fields).
-- version: 3

CREATE OR REPLACE FUNCTION receipts_replay(
    replay_scope text, replay_operation text, replay_request_id uuid,
    replay_now timestamptz, replay_digests jsonb, replay_packed bytea,
    replay_per_field bytea, deleted_state text,
    attempt_identity uuid, attempt_route text, wait_ms integer, commit_quietly boolean
) RETURNS TABLE (
    id bigint, state text, digests jsonb, packed_digests bytea, result_id bigint,
    first_route text, attempts integer, first_seen_at timestamptz, last_seen_at timestamptz,
    receipt_expires_at timestamptz, deleted_at timestamptz, outcome text
) LANGUAGE plpgsql VOLATILE ROWS 1 AS $$
#variable_conflict use_column
BEGIN
    -- The claim's wait bound (receipts/engines/postgresql.py, wait_bound_ms), set before the
    -- row is locked; and no flush wait for bookkeeping (commit_quietly), outside a
    -- caller's transaction only: that commit is the caller's.
    PERFORM set_config('lock_timeout', wait_ms::text, true);
    IF commit_quietly THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    RETURN QUERY
    WITH hit AS (
        UPDATE receipts_receipt AS r
        SET attempts = r.attempts + 1, last_seen_at = replay_now
        WHERE r.scope = replay_scope AND r.operation = replay_operation
            AND r.request_id = replay_request_id
        RETURNING r.id, r.state::text, r.digests, r.packed_digests, r.result_id,
            r.first_route::text, r.attempts, r.first_seen_at, r.last_seen_at,
            r.receipt_expires_at, r.deleted_at,
            CASE WHEN r.state = deleted_state THEN 'deleted'
                WHEN r.receipt_expires_at <= replay_now THEN 'expired'
                WHEN CASE WHEN r.packed_digests IS NULL THEN r.digests = replay_digests
                    WHEN mod(length(r.packed_digests), 16) = 0
                        THEN r.packed_digests = replay_per_field
                    ELSE substring(r.packed_digests FROM 1 FOR 17)
                        = substring(replay_packed FROM 1 FOR 17)
                    END THEN 'replayed'
                ELSE 'conflict' END AS outcome
    ), logged AS (
        INSERT INTO receipts_attempt (identity, receipt_id, route, outcome, detail, created_at)
        SELECT attempt_identity, hit.id, attempt_route, hit.outcome,
            CASE WHEN hit.outcome = 'replayed' THEN '' ELSE hit.outcome END, replay_now
        FROM hit
    )
    SELECT hit.* FROM hit;
END
$$;
