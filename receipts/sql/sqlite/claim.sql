-- The claim on SQLite (receipts/engines/sqlite.py `write`): the receipt INSERTed with
-- ON CONFLICT DO NOTHING, so a claim that meets a committed receipt of its identity
-- returns no row (a lost claim) instead of failing. Every transaction on SQLite holds
-- the one write lock from its first statement (BEGIN IMMEDIATE), so nothing waits here.
--
-- The columns are PostgreSQL's claim's (postgresql/claim.sql) but result_id, which
-- result.sql sets once the effect's INSERT (effect.sql) has its id; the others a claim
-- leaves to their NULL: id (its own sequence), digests (the JSON form of receipts made
-- before the packed one), last_seen_at (null until a retry) and deleted_at (a delete
-- sets it).
-- tests/receipts/test_statement_files.py holds this list to receipts.models.Receipt.
--
-- Parameters by name, one a column. No slot.
INSERT INTO receipts_receipt (
    scope, operation, request_id, packed_digests, state, first_route, attempts,
    first_seen_at, receipt_expires_at
)
VALUES (
    %(scope)s, %(operation)s, %(request_id)s, %(packed_digests)s, %(state)s,
    %(first_route)s, %(attempts)s, %(first_seen_at)s, %(receipt_expires_at)s
)
ON CONFLICT (request_id, scope, operation) DO NOTHING
RETURNING id
