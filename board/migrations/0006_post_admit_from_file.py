"""The admission function `board_post_admit` from board/sql/board_post_admit.sql, its one
copy from now on (migration 0005 wrote it inline): version 1 of the file.

The file is applied by version (receipts/function_file.py): a later version comes with a
new migration like this one, and this one then applies nothing, so what an old migration
runs never changes. SQLite: nothing to do (its admission runs in Python)."""

from importlib import import_module

from django.db import migrations

from receipts.function_file import FunctionFile

FUNCTION_FILE = FunctionFile(
    "board/sql/board_post_admit.sql", version=1,
    code="f32dc43ff29735d6c6e81c1cfd3c2b0e29ccc9a06006810a3394f3b2e7e51233",
)
# What this migration replaces, to put back when it is reversed.
EARLIER = import_module("board.migrations.0005_post_admit_function").POST_ADMIT


def apply(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        text = FUNCTION_FILE.text_to_apply()
        if text is not None:
            schema_editor.execute(text)


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(EARLIER)


class Migration(migrations.Migration):
    dependencies = [("board", "0005_post_admit_function")]

    operations = [migrations.RunPython(apply, restore, elidable=False)]
