"""The deliveries page's per-minute tally of each endpoint's sends and 2xx answers
(maintenance/deliveries/rates.py): a new, small table, written by a beat job only. No index
is added to the attempts, which every delivery attempt writes: the job reads them by
attempt_started, which exists."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('maintenance', '0009_expiring_receipts_rollup'),
    ]

    operations = [
        migrations.CreateModel(
            name='EndpointMinute',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('minute', models.DateTimeField()),
                ('sends', models.PositiveIntegerField(default=0)),
                ('successes', models.PositiveIntegerField(default=0)),
                ('rolled_up_at', models.DateTimeField()),
                ('endpoint', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='maintenance.endpoint')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('minute', 'endpoint'), name='endpoint_minute_unique')],
            },
        ),
    ]
