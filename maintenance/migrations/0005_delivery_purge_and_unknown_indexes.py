"""The deliveries purge's index in its query's order (settled_at, among final states),
replacing one led by the state; and the unknown outcomes by creation, which the dashboard
counts up to a bound. Built without locking writes on PostgreSQL
(receipts/online_index.py), hence not atomic."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("maintenance", "0004_dashboard_rollup_and_purge_forecast"),
    ]

    operations = [
        AddIndexOnline(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("state__in", ["succeeded", "failed", "cancelled"])),
                fields=["settled_at"], name="delivery_final_settled",
            ),
        ),
        RemoveIndexOnline(model_name="delivery", name="delivery_state_settled"),
        AddIndexOnline(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("state", "outcome_unknown")),
                fields=["created_at", "id"], name="delivery_unknown_created",
            ),
        ),
    ]
