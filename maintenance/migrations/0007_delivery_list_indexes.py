"""The console's deliveries list and inbox by index (SPEC 11.7): newest first with ties by
id, whole and by state (the inbox is outcome_unknown) and by endpoint (which replaces
delivery_endpoint_newest, adding the tie); and attempts by their start, for the success
rates of the last day. Built CONCURRENTLY on PostgreSQL, so not
atomic; the new endpoint index exists before the old one goes."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline, RemoveIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("maintenance", "0006_purge_forecast_expiring"),
    ]

    operations = [
        AddIndexOnline(
            model_name="delivery",
            index=models.Index(fields=["-created_at", "-id"], name="delivery_newest"),
        ),
        AddIndexOnline(
            model_name="delivery",
            index=models.Index(
                fields=["state", "-created_at", "-id"], name="delivery_state_newest"
            ),
        ),
        AddIndexOnline(
            model_name="delivery",
            index=models.Index(
                fields=["endpoint", "-created_at", "-id"], name="delivery_endpoint_newest_id"
            ),
        ),
        RemoveIndexOnline(model_name="delivery", name="delivery_endpoint_newest"),
        AddIndexOnline(
            model_name="deliveryattempt",
            index=models.Index(fields=["started_at"], name="attempt_started"),
        ),
    ]
