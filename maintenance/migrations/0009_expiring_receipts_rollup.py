"""The rollup of receipts expiring per minute (maintenance/expiring.py) that the retention
page's chart reads instead of counting every live receipt. A new, empty table: the
forecast job's first run fills it from the live receipts."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('maintenance', '0008_drop_delivery_unknown_created'),
    ]

    operations = [
        migrations.CreateModel(
            name='ExpiringReceipts',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('minute', models.DateTimeField()),
                ('deleted', models.BooleanField(default=False)),
                ('expires_minute', models.DateTimeField()),
                ('expires_on', models.DateField()),
                ('receipts', models.PositiveIntegerField(default=0)),
                ('rolled_up_at', models.DateTimeField()),
            ],
            options={
                'indexes': [models.Index(fields=['expires_minute'], name='expiring_by_expiry')],
                'constraints': [models.UniqueConstraint(fields=('minute', 'deleted', 'expires_minute'), name='expiring_one_per_minute')],
            },
        ),
    ]
