"""An entry's principal checked by triggers instead of a foreign key, on PostgreSQL: the
same refusals without the row lock that cost every new post 54 bytes of WAL
(docs/write-path.md, "The foreign key's lock on the principal"; SPEC 12.1).

PostgreSQL checked `board_entry.principal_id` by locking the principal's row FOR KEY
SHARE, a lock written into the row, so into the WAL. Instead:
- board/sql/board_entry_principal_exists.sql refuses an entry naming no principal
  (SQLSTATE 23503, as the foreign key did) with a plain read;
- board/sql/board_principal_kept.sql refuses deleting a principal or changing its id, and
  emptying board_principal while entries name principals. Principals are never deleted
  (SPEC 4), so what the insert saw cannot be undone before its commit: that is what the
  lock was for. Both files are applied by version (receipts/function_file.py).

Quick on a large table: the triggers are created and the foreign key dropped, no row is
read or rewritten; the locks (board_entry's and board_principal's, for ALTER TABLE and
CREATE TRIGGER) are held for milliseconds, once any transaction already using the tables
ends. The principal's index stays: erasure and holds find a principal's entries by it.

SQLite keeps its real foreign key: it writes no lock into any row (nothing to save), and
Django changes a SQLite foreign key by remaking the table, copying every entry and
dropping the FTS5 triggers of migration 0007. So only the model's state changes there
(`db_constraint=False`); a later migration that remakes board_entry on SQLite would build
it without the foreign key (and must put the FTS5 triggers back anyway)."""

import django.db.models.deletion
from django.db import migrations, models

from receipts.function_file import FunctionFile

FUNCTION_FILES = (
    FunctionFile(
        "board/sql/board_entry_principal_exists.sql", version=1,
        code="1a574ce15f51021a4731e7ae1233cff9bd930fde6348453acf947a1b81d9a5db",
    ),
    FunctionFile(
        "board/sql/board_principal_kept.sql", version=1,
        code="db8251fa22d4c61a42fa0a9d1cca3882605f21dfa0b764fac496a8a17b4d9a77",
    ),
)
# The name Django gave the foreign key (migration 0001), to put it back when reversed.
FOREIGN_KEY = "board_entry_principal_id_2746f426_fk_board_principal_id"
TRIGGERS = [
    ("board_entry_principal_exists", "board_entry"),
    ("board_entry_principal_changed", "board_entry"),
    ("board_principal_kept", "board_principal"),
    ("board_principal_id_kept", "board_principal"),
    ("board_principal_emptied", "board_principal"),
]


def foreign_keys_to_principal(schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE contype = 'f'"
            " AND conrelid = 'board_entry'::regclass"
            " AND confrelid = 'board_principal'::regclass"
        )
        return [name for name, in cursor.fetchall()]


def apply(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for function_file in FUNCTION_FILES:
        text = function_file.text_to_apply()
        if text is not None:
            schema_editor.execute(text, params=None)  # its `%s` are format()'s, not slots
    for name in foreign_keys_to_principal(schema_editor):
        quoted = schema_editor.quote_name(name)
        # As Django drops a foreign key: its checks still pending in this transaction
        # would make ALTER TABLE fail.
        schema_editor.execute(f"SET CONSTRAINTS {quoted} IMMEDIATE")
        schema_editor.execute(f"ALTER TABLE board_entry DROP CONSTRAINT {quoted}")


def restore(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for trigger, table in TRIGGERS:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
    for function_file in FUNCTION_FILES:
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {function_file.function}()")
    schema_editor.execute(
        f"ALTER TABLE board_entry ADD CONSTRAINT {FOREIGN_KEY} FOREIGN KEY (principal_id)"
        " REFERENCES board_principal (id) DEFERRABLE INITIALLY DEFERRED"
    )


class Migration(migrations.Migration):
    dependencies = [("board", "0009_entry_newest_indexes_ascending")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="entry",
                    name="principal",
                    field=models.ForeignKey(
                        blank=True, db_constraint=False, null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries", to="board.principal",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(apply, restore, elidable=False)],
        ),
    ]
