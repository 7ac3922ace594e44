"""The hourly counters become an UNLOGGED table on PostgreSQL (see board/posting/statements.py):
a counter upsert commits without waiting for a WAL flush, so the hot counter rows are
held for microseconds, not across a durable commit. A crash empties the table (the
current hour's counts start again); nothing else changes. SQLite: nothing to do."""

from django.db import migrations


def unlogged(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE board_hourlycounter SET UNLOGGED")


def logged(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE board_hourlycounter SET LOGGED")


class Migration(migrations.Migration):
    dependencies = [("board", "0001_initial")]

    operations = [migrations.RunPython(unlogged, logged, elidable=False)]
