-- The write after the claim (receipts/engines/postgresql.py `write` sends claim.sql,
-- then this, in one round trip). It has a snapshot of its own, taken after the claim's
-- wait, so the tombstone read sees what a purge the claim waited for left.
--
-- In order: the claimed receipt (its id in the transaction's setting settle.claimed);
-- the identity's tombstone in force (tomb: the statement SQLite's write runs on its
-- own, receipts/sql/tombstone_in_force.sql, with the identity's key and the day
-- receipts.models.tombstone_today gives); allowed, when there is no tombstone, the
-- caller's refusal known before the claim is absent (a boolean parameter) and its guard
-- holds (an SQL boolean expression with its own parameters, TRUE without one: the
-- board's reply guard, board/sql/postgresql/question_open.sql, locks its question);
-- then the effect's row with the id the claim reserved; a refused write withdraws the
-- claim (DELETE of the row the claim inserted) and commits nothing else; and each
-- companion's rows, linked to the new row's id. One row: the claimed receipt's id, the
-- new row's id (NULL when refused), the tombstone's reason, and an array of each
-- companion's `returning` column.
--
-- Composed once per effect model, set of fields, companions and guard
-- (`_write_sql`): the engine writes any model's row, the caller's (receipts imports
-- nothing of the others), so the names in braces are filled in, and only with these:
-- the effect's table, primary key and columns with their typed placeholders (an
-- INSERT ... SELECT does not infer a NULL's type), the guard, and the companions' CTEs
-- and arrays, which other apps hand over as data (receipts.services.Companion); and
-- the tombstone read, {tombstone_in_force}, the one copy both engines' writes send.
WITH claimed AS (
    SELECT id, result_id FROM receipts_receipt
    WHERE id = NULLIF(current_setting('settle.claimed', true), '')::bigint
), tomb AS (
    {tombstone_in_force}
), allowed AS (
    SELECT id, result_id FROM claimed
    WHERE NOT EXISTS (SELECT 1 FROM tomb) AND %s AND ({guard})
), made AS (
    INSERT INTO {effect_table} ({effect_pk}, {effect_columns})
    SELECT allowed.result_id, {effect_values} FROM allowed
    RETURNING {effect_pk} AS id
), withdrawn AS (
    DELETE FROM receipts_receipt WHERE id IN (SELECT id FROM claimed)
        AND NOT EXISTS (SELECT 1 FROM allowed)
{companions})
SELECT (SELECT id FROM claimed), (SELECT id FROM made), (SELECT reason FROM tomb)
    {companions_returned}
