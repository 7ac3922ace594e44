-- The effect's row on SQLite (receipts/engines/sqlite.py `write`), after the claim:
-- its new id returned, for result.sql and the companions (companion.sql).
--
-- Composed once per effect model and set of fields (`_effect_sql`): the engine writes
-- any model's row, the caller's (receipts imports nothing of the others), so the slots
-- hold what only the model can say, names, never values: {effect_table},
-- {effect_pk} and {effect_columns}, and {effect_values}, one positional placeholder a
-- column (the values are parameters, receipts.statements.effect_params).
INSERT INTO {effect_table} ({effect_columns}) VALUES ({effect_values})
RETURNING {effect_pk}
