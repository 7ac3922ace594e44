-- A replay's attempt logged on SQLite (receipts/engines/sqlite.py `replay`), with the
-- word its verdict gives and the detail receipts.statements.outcome_detail gives it
-- (PostgreSQL's function receipts_replay writes the same row).
--
-- Every column of an attempt but its id (its own sequence);
-- tests/receipts/test_statement_files.py holds this list to receipts.models.Attempt.
--
-- Parameters by name. No slot.
INSERT INTO receipts_attempt (identity, receipt_id, route, outcome, detail, created_at)
VALUES (
    %(identity)s, %(receipt_id)s, %(route)s, %(outcome)s, %(detail)s, %(created_at)s
)
