"""The purges' batch queries matched to their indexes: receipts by `(receipt_expires_at,
id)` (replacing the expiry alone), tombstones by `expires_at`. Built without locking
writes on PostgreSQL (receipts/online_index.py), hence not atomic."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("receipts", "0005_replay_from_file"),
    ]

    operations = [
        AddIndexOnline(
            model_name="receipt",
            index=models.Index(fields=["receipt_expires_at", "id"], name="receipt_expiry_id"),
        ),
        RemoveIndexOnline(model_name="receipt", name="receipt_expiry"),
        AddIndexOnline(
            model_name="tombstone",
            index=models.Index(fields=["expires_at"], name="tombstone_expiry"),
        ),
    ]
