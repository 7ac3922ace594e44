from django.apps import AppConfig


class ReceiptPeerConfig(AppConfig):
    name = "tests.bench.receipt_peer"
    label = "bench_receipt_peer"  # no clash with Settle's apps where both share a database
    default_auto_field = "django.db.models.BigAutoField"
