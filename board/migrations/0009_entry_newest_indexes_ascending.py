"""The type's and the actor's indexes keep their entries by ascending id: each list reads
them newest first all the same (an index is read in either direction), and a new entry
goes after the entries before it in its leaf, so a full leaf splits where PostgreSQL
leaves the old page full. By descending id a new entry goes before them, and each split
halves a page and writes half a page to the WAL: 25 bytes a post over 300 posts, 40 to
44 over 1,000 (docs/write-path.md). Built beside the old ones before they go, without
locking posts out on PostgreSQL (receipts/online_index.py), hence not atomic."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("board", "0008_entry_replies_index")]

    operations = [
        AddIndexOnline(
            model_name="entry",
            index=models.Index(fields=["type", "id"], name="entry_type_newest_up"),
        ),
        RemoveIndexOnline(model_name="entry", name="entry_type_newest"),
        migrations.RenameIndex(
            model_name="entry", new_name="entry_type_newest", old_name="entry_type_newest_up"
        ),
        AddIndexOnline(
            model_name="entry",
            index=models.Index(fields=["actor_name", "id"], name="entry_actor_newest_up"),
        ),
        RemoveIndexOnline(model_name="entry", name="entry_actor_newest"),
        migrations.RenameIndex(
            model_name="entry", new_name="entry_actor_newest", old_name="entry_actor_newest_up"
        ),
    ]
