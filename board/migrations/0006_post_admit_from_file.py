"""The admission function `board_post_admit` from board/sql/board_post_admit.sql, its one copy from now on (migration
0005 wrote it inline).

A later change to that file comes with a new migration like this one, and this one then
applies nothing: it runs only the text it was written for (WRITTEN_FOR), so what an old
migration runs never changes. SQLite: nothing to do (its admission runs in Python)."""

from hashlib import sha256
from importlib import import_module
from pathlib import Path

from django.db import migrations

SQL = Path(__file__).resolve().parents[1] / "sql/board_post_admit.sql"
# The file's SHA-256 when this migration was written (tests/test_migrations.py holds the
# newest migration that applies a file to the file as it is).
WRITTEN_FOR = "1812fccffc7de84d304ee098ebf71804492ddf54ea0fb7a09792383bf320749e"
# What this migration replaces, to put back when it is reversed.
EARLIER = import_module("board.migrations.0005_post_admit_function").POST_ADMIT


def apply(apps, schema_editor):
    text = SQL.read_bytes()
    if schema_editor.connection.vendor == "postgresql" and sha256(text).hexdigest() == WRITTEN_FOR:
        schema_editor.execute(text.decode())


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(EARLIER)


class Migration(migrations.Migration):
    dependencies = [("board", "0005_post_admit_function")]

    operations = [migrations.RunPython(apply, restore, elidable=False)]
