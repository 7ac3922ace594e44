"""An erasure whose start passed the console's count bound has no total until its runner
counts it (SPEC 11.7): `total` may be empty. `tokens_revoked` keeps what the start revoked
for the start's audit event, which that runner then writes."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('moderation', '0005_audit_list_indexes'),
    ]

    operations = [
        migrations.AddField(
            model_name='erasure',
            name='tokens_revoked',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AlterField(
            model_name='erasure',
            name='total',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
