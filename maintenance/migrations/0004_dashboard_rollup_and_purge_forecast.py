"""The dashboard's per-minute tally (maintenance/activity.py) and the last recorded
dry run of the purges (maintenance/forecast.py): new, small tables."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("maintenance", "0003_delivery_write_indexes"),
    ]

    operations = [
        migrations.CreateModel(
            name="ActivityMinute",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("minute", models.DateTimeField(unique=True)),
                ("posts", models.PositiveIntegerField(default=0)),
                ("new", models.PositiveIntegerField(default=0)),
                ("replayed", models.PositiveIntegerField(default=0)),
                ("conflicts", models.PositiveIntegerField(default=0)),
                ("rate_limited", models.PositiveIntegerField(default=0)),
                ("rolled_up_at", models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name="PurgeForecast",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("measured_at", models.DateTimeField(db_index=True)),
                ("duration_seconds", models.FloatField()),
                ("jobs", models.JSONField(default=dict)),
                ("tombstones", models.JSONField(default=dict)),
            ],
        ),
    ]
