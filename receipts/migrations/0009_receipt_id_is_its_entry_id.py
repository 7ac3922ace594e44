"""A receipt's id is its result's id (receipts/sql/postgresql/claim.sql,
receipts/sql/sqlite/claim.sql), so the primary key finds the receipt of a result, and
the index on `result_id` keeps only the receipts made before, whose ids differ
(`receipt_result_id_older`, partial): a new post writes no entry to it, 64 bytes of WAL
fewer (docs/write-path.md). The look-ups ask both (`receipts.models.of_results` and the
statements that write its condition out).

The effect's sequence moves past the receipts' ids in the migration of the app that owns
the effect (board 0013). Built beside the old index before it
goes, without locking posts out on PostgreSQL (receipts/online_index.py), hence not
atomic."""

from django.db import migrations, models
from django.db.models import F, Q

import receipts.models
from receipts.online_index import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("receipts", "0008_packed_digests")]

    operations = [
        AddIndexOnline(
            model_name="receipt",
            index=models.Index(
                condition=Q(receipts.models.Differs(F("result_id"), F("id"))),
                fields=["result_id"],
                name="receipt_result_id_older",
            ),
        ),
        RemoveIndexOnline(model_name="receipt", name="receipt_result_id"),
    ]
