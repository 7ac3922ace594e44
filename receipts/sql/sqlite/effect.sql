-- The effect's row on SQLite (receipts/engines/sqlite.py `write`), after the claim:
-- with the id the claim reserved and wrote as the receipt's (claim.sql), the first
-- parameter, and returned for the companions (companion.sql).
--
-- Composed once per effect model and set of fields (`_effect_sql`): the engine writes
-- any model's row, the caller's (receipts imports nothing of the others), so the slots
-- hold what only the model can say, names, never values: {effect_table},
-- {effect_pk} and {effect_columns}, and {effect_values}, one positional placeholder a
-- column (the values are parameters, receipts.statements.effect_params).
INSERT INTO {effect_table} ({effect_pk}, {effect_columns}) VALUES (%s, {effect_values})
RETURNING {effect_pk}
