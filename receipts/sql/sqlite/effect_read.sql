-- A replay's effect on SQLite (receipts/engines/sqlite.py `_load`): the row the
-- receipt's result_id names, every concrete column, in the order
-- receipts.statements.effect_from_row reads them.
--
-- Composed once per model (`_effect_read_sql`): the engine reads any model's row, the
-- caller's, so the slots hold its names: {effect_columns}, {effect_table},
-- {effect_pk}. The id is a positional parameter.
SELECT {effect_columns} FROM {effect_table} WHERE {effect_pk} = %s
