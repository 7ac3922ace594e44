"""The console's audit log and its filters by index, in its order (newest first, ties by
id); the single-column indexes on created_at and action go, the new ones start with them.
Built CONCURRENTLY on PostgreSQL (so not atomic), as the log grows with every action."""

from django.db import migrations, models

from receipts.online_index import AddIndexOnline


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("moderation", "0004_login_reservation"),
    ]

    operations = [
        AddIndexOnline(
            model_name="auditevent",
            index=models.Index(fields=["-created_at", "-id"], name="audit_newest"),
        ),
        AddIndexOnline(
            model_name="auditevent",
            index=models.Index(fields=["actor", "-created_at", "-id"], name="audit_actor_newest"),
        ),
        AddIndexOnline(
            model_name="auditevent",
            index=models.Index(
                fields=["action", "-created_at", "-id"], name="audit_action_newest"
            ),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="action",
            field=models.CharField(max_length=40),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="created_at",
            field=models.DateTimeField(),
        ),
    ]
