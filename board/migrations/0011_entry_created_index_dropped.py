"""`entry_created` goes: its readers (the console's date filter, the dashboard's rollup,
the retention forecast) find a span of time's entries by the primary key, as ids grow
with creation time (board/selectors.py), and the btree cost every new post a
leaf insert, 64 bytes of WAL (SPEC 12.1, docs/write-path.md). Dropped without locking
posts out on PostgreSQL (receipts/online_index.py), hence not atomic."""

from django.db import migrations

from receipts.online_index import RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("board", "0010_entry_principal_checked_without_lock")]

    operations = [
        RemoveIndexOnline(model_name="entry", name="entry_created"),
    ]
