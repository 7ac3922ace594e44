"""The replay function `receipts_replay` from receipts/sql/receipts_replay.sql, its one
copy from now on (migration 0004 wrote it inline): version 1 of the file.

The file is applied by version (receipts/function_file.py): a later version comes with a
new migration (0008 applies version 2), and this one then applies nothing, so what an old
migration runs never changes. SQLite: nothing to do (its replay runs in Python)."""

from importlib import import_module

from django.db import migrations

from receipts.function_file import FunctionFile

FUNCTION_FILE = FunctionFile(
    "receipts/sql/receipts_replay.sql", version=1,
    code="0f0c593c6412c5fcb798d3010ae19e9da8a74616c622d5ee68db482a68ee0646",
)
# What this migration replaces, to put back when it is reversed.
EARLIER = import_module("receipts.migrations.0004_replay_function").REPLAY


def apply(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        text = FUNCTION_FILE.text_to_apply()
        if text is not None:
            schema_editor.execute(text)


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(EARLIER)


class Migration(migrations.Migration):
    dependencies = [("receipts", "0004_replay_function")]

    operations = [migrations.RunPython(apply, restore, elidable=False)]
