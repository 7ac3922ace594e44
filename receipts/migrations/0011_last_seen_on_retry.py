"""A receipt's `last_seen_at` is null until a retry: a new receipt's last attempt is its
first (`first_seen_at`), so a new post writes 8 bytes fewer; readers take
`Receipt.last_seen`. Receipts made before keep theirs (no rows are rewritten).

Reversing it gives the receipts made since their first time as their last, as the code
before wrote it, then makes the column required again."""

from django.db import migrations, models
from django.db.models import F


def last_seen_when_first_seen(apps, schema_editor):
    Receipt = apps.get_model("receipts", "Receipt")
    Receipt.objects.filter(last_seen_at__isnull=True).update(last_seen_at=F("first_seen_at"))


class Migration(migrations.Migration):
    dependencies = [("receipts", "0010_request_digest")]

    operations = [
        migrations.AlterField(
            model_name="receipt", name="last_seen_at", field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(
            migrations.RunPython.noop, last_seen_when_first_seen, elidable=False
        ),
    ]
