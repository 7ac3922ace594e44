"""A receipt's id is its entry's id: the entries' sequence moved past every receipt's
id, and the receipts' ids drawn from it from now on (receipts/effect_ids.py), so the
id a claim draws is never a receipt's already. Receipts' side: receipts 0009."""

from django.db import migrations

from receipts.effect_ids import ReceiptIdsFromEffect


class Migration(migrations.Migration):
    dependencies = [
        ("board", "0012_entry_type_partial_indexes"),
        ("receipts", "0009_receipt_id_is_its_entry_id"),
    ]

    operations = [ReceiptIdsFromEffect(model_name="entry")]
