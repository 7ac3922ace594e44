"""The replay function `receipts_replay` from receipts/sql/receipts_replay.sql, its one copy from now on (migration
0004 wrote it inline).

A later change to that file comes with a new migration like this one, and this one then
applies nothing: it runs only the text it was written for (WRITTEN_FOR), so what an old
migration runs never changes. SQLite: nothing to do (its replay runs in Python)."""

from hashlib import sha256
from importlib import import_module
from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parents[1] / "sql/receipts_replay.sql"
# The file's SHA-256 when this migration was written (tests/test_migrations.py holds the
# newest migration that applies a file to the file as it is).
WRITTEN_FOR = "a31d75252198e8c436a5c5e27e4017eb8d91709c526ef6fbef71b58d35585f44"
# What this migration replaces, to put back when it is reversed.
EARLIER = import_module("receipts.migrations.0004_replay_function").REPLAY


def apply(apps, schema_editor):
    text = SQL.read_bytes()
    if schema_editor.connection.vendor == "postgresql" and sha256(text).hexdigest() == WRITTEN_FOR:
        schema_editor.execute(text.decode())


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(EARLIER)


class Migration(migrations.Migration):
    dependencies = [("receipts", "0004_replay_function")]

    operations = [migrations.RunPython(apply, restore, elidable=False)]
