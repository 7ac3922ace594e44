"""A receipt's `last_seen_at` is null until a retry: a new receipt's last attempt is its
first (`first_seen_at`), so a new post writes 8 bytes fewer; readers take
`Receipt.last_seen`. Receipts made before keep theirs (no rows are rewritten)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("receipts", "0010_request_digest")]

    operations = [
        migrations.AlterField(
            model_name="receipt", name="last_seen_at", field=models.DateTimeField(null=True),
        ),
    ]
