-- The claim on SQLite (receipts/engines/sqlite.py `write`): the receipt INSERTed with
-- ON CONFLICT DO NOTHING, so a claim that meets a committed receipt of its identity
-- returns no row (a lost claim) instead of failing. Every transaction on SQLite holds
-- the one write lock from its first statement (BEGIN IMMEDIATE), so nothing waits here.
--
-- The receipt's id is its effect's, reserved here and written as both id and result_id;
-- effect.sql then writes the effect with it. One past both tables' counters in
-- sqlite_sequence (AUTOINCREMENT: each counter is the highest id its table ever had,
-- moved by an insert with an explicit id too), so it is neither a receipt's nor an
-- effect's id, whatever made the rows before (the ORM in tests, receipts made before
-- this id was shared); and the write lock keeps anyone from taking it meanwhile.
-- (PostgreSQL's claim draws it from the effect's sequence, postgresql/claim.sql.)
--
-- The columns are PostgreSQL's claim's; the others a claim leaves to their NULL:
-- digests (the JSON form of receipts made before the packed one), last_seen_at (null
-- until a retry) and deleted_at (a delete sets it).
-- tests/receipts/test_statement_files.py holds this list to receipts.models.Receipt.
--
-- Parameters by name, one a column but the reserved id, from the effect's table
-- (effect_table, its name as text). No slot.
INSERT INTO receipts_receipt (
    scope, operation, request_id, packed_digests, state, first_route, attempts,
    first_seen_at, receipt_expires_at, result_id,
    id
)
SELECT
    %(scope)s, %(operation)s, %(request_id)s, %(packed_digests)s, %(state)s,
    %(first_route)s, %(attempts)s, %(first_seen_at)s, %(receipt_expires_at)s, reserved,
    reserved
FROM (
    SELECT COALESCE(MAX(seq), 0) + 1 AS reserved FROM sqlite_sequence
    WHERE name IN ('receipts_receipt', %(effect_table)s)
)
-- (WHERE true: SQLite reads an ON after INSERT ... SELECT's FROM as a join's.)
WHERE true
ON CONFLICT (request_id, scope, operation) DO NOTHING
RETURNING id
