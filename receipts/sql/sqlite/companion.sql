-- One companion's rows on SQLite (receipts/engines/sqlite.py `_companions_write`),
-- linked to the effect's new id, in one INSERT ... SELECT (PostgreSQL's write.sql runs
-- the same one as a CTE); its `returning` column of each row written.
--
-- Composed once per companion's shape (`_companion_sql`): another app hands the
-- companion over as data (receipts.services.Companion), so the slots hold its names
-- and its own statement: {table}, {columns}, {link} (the column that takes the
-- effect's id), {returning}, and {rows_sql}, the statement that selects its rows, with
-- its own positional parameters. The first parameter is the effect's id; the
-- companion's parameters follow.
INSERT INTO {table} ({columns}, {link})
SELECT companion.*, %s FROM ({rows_sql}) AS companion
RETURNING {returning}
