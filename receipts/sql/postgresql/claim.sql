-- The claim (receipts/engines/postgresql.py `write` sends it, then write.sql, in one
-- round trip): the receipt INSERTed, its row SELECTed from the lock bound, so the bound
-- is set for the transaction before the INSERT can wait on another claim, and the
-- effect's id reserved. One row: the receipt's id and result_id, and the id left in the
-- transaction's setting settle.claimed for write.sql.
--
-- The lock bound: `lock_timeout` of SETTLE_CLAIM_WAIT_SECONDS (the parameter
-- lock_timeout, in milliseconds), evaluated before anything is locked, in this
-- statement, so it costs no round trip and needs nothing of the connection:
-- set_config(..., true) is SET LOCAL, which a pooler in transaction mode (PgBouncer)
-- keeps, because the transaction runs on one server connection from BEGIN to COMMIT. A
-- connection's startup option `-c lock_timeout=...` would not do: PgBouncer refuses it
-- (`unsupported startup parameter: options`), and ignored, the bound would be gone.
-- Past the bound the claim answers in_progress, any other wait unavailable.
-- (board/serving/postgresql/base.py finds the bound here by its text,
-- "set_config('lock_timeout'", and adds no SET LOCAL of its own.)
--
-- A plain INSERT, not `ON CONFLICT DO NOTHING`: it waits for another claim of the same
-- identity as that does, and once that one commits it fails on the identity's unique
-- constraint, which `write` answers as a lost claim. ON CONFLICT inserts speculatively
-- and confirms the row: a WAL record of 48 bytes on every new post, for a race a post
-- seldom meets (the admission looked for a committed receipt first).
--
-- The effect's id is drawn from its table's sequence (effect_table, effect_pk: the
-- table and column names, as text) by the claim itself, so the receipt is written once
-- with its result_id. Setting it afterwards was an UPDATE of an indexed column, never
-- HOT: a second version of the receipt and an entry in each of its five indexes, on
-- every new post. A claim that loses or rolls back leaves a gap in the ids, as any
-- rolled-back insert does.
--
-- The one id drawn is the receipt's id as well as its result_id: a receipt's id is its
-- effect's, so the primary key finds the receipt of an entry and a new post writes no
-- entry in the index on result_id (partial, `receipt_result_id_older`: the receipts made
-- before, whose ids differ) nor a log of the receipts' own sequence. Receipts made any
-- other way draw from the same sequence (the id column's default), and the migration
-- that made it so moved the sequence past every older receipt's id
-- (receipts/effect_ids.py), so a claimed id is never taken.
--
-- Typed placeholders, as INSERT ... SELECT does not infer them from the columns; text,
-- not varchar(n), for strings, so a value too long fails as in VALUES, never truncated.
-- The columns are every column of a receipt but three: digests (the JSON form of
-- receipts made before the packed one), last_seen_at (null until a retry) and deleted_at
-- (a delete sets it); tests/receipts/test_statement_files.py holds this list to
-- receipts.models.Receipt.
WITH claimed AS (
    INSERT INTO receipts_receipt (
        scope, operation, request_id, packed_digests, state, first_route, attempts,
        first_seen_at, receipt_expires_at, result_id,
        id
    )
    SELECT
        CAST(%(scope)s AS text), CAST(%(operation)s AS text),
        CAST(%(request_id)s AS uuid), CAST(%(packed_digests)s AS bytea),
        CAST(%(state)s AS text), CAST(%(first_route)s AS text),
        CAST(%(attempts)s AS integer),
        CAST(%(first_seen_at)s AS timestamp with time zone),
        CAST(%(receipt_expires_at)s AS timestamp with time zone),
        bound.reserved,
        bound.reserved
    FROM (
        SELECT set_config('lock_timeout', %(lock_timeout)s, true),
            nextval(pg_get_serial_sequence(%(effect_table)s, %(effect_pk)s)) AS reserved
    ) AS bound
    RETURNING id, result_id
)
SELECT (SELECT id FROM claimed), (SELECT result_id FROM claimed),
    set_config('settle.claimed', COALESCE((SELECT id::text FROM claimed), ''), true)
