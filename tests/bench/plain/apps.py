from django.apps import AppConfig


class PlainConfig(AppConfig):
    name = "tests.bench.plain"
    label = "bench_plain"  # no clash with Settle's apps where both share a database
    default_auto_field = "django.db.models.BigAutoField"
