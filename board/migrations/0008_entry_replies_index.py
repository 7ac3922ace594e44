"""The index of an entry's parent holds replies only (`WHERE parent_id IS NOT NULL`): a
question has no parent, and every lookup is by a question's id, which PostgreSQL proves
not null, so the partial index serves them all and a new question writes one index
entry fewer. Built beside the old one before that goes, both without locking posts out
on PostgreSQL (receipts/online_index.py), hence not atomic."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("board", "0007_entry_search_and_filter_indexes")]

    operations = [
        AddIndexOnline(
            model_name="entry",
            index=models.Index(
                fields=["parent", "id"], name="entry_replies_oldest",
                condition=models.Q(parent__isnull=False),
            ),
        ),
        RemoveIndexOnline(model_name="entry", name="entry_parent_oldest"),
    ]
