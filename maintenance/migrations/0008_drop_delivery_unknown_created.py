"""delivery_state_newest (state, created_at, id) serves every read that
delivery_unknown_created served: the dashboard's unknown outcomes per window (a range of
created_at under state = 'outcome_unknown'), the inbox oldest first (the same range walked
backwards) and its bounded count; one index fewer to write when a delivery's outcome
becomes unknown. Dropped CONCURRENTLY on PostgreSQL, so not atomic."""

from django.db import migrations

from receipts.online_index import RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("maintenance", "0007_delivery_list_indexes"),
    ]

    operations = [
        RemoveIndexOnline(model_name="delivery", name="delivery_unknown_created"),
    ]
