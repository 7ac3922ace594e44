"""The type's index on (type, id) becomes a partial index on id for each type: a new
entry's key no longer carries its type's text, 80 bytes of WAL a post become 64
(docs/write-path.md). The public list and the console's type filter read them in the same
order (board.models `_TypeWritten` writes the type into their SQL, so the planner can
use them). Built beside the old index before it goes, without locking posts out on
PostgreSQL (receipts/online_index.py), hence not atomic."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("board", "0011_entry_created_index_dropped")]

    operations = [
        AddIndexOnline(
            model_name="entry",
            index=models.Index(
                fields=["id"], name="entry_question_newest",
                condition=models.Q(type="question"),
            ),
        ),
        AddIndexOnline(
            model_name="entry",
            index=models.Index(
                fields=["id"], name="entry_reply_newest", condition=models.Q(type="reply"),
            ),
        ),
        RemoveIndexOnline(model_name="entry", name="entry_type_newest"),
    ]
