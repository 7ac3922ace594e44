from django.db import models


class Token(models.Model):
    digest = models.CharField(max_length=64, unique=True)  # SHA-256 of the bearer token
    principal = models.CharField(max_length=80)

    class Meta:
        db_table = "bench_peer_token"


class Entry(models.Model):
    title = models.CharField(max_length=200)
    body = models.TextField()
    author = models.CharField(max_length=80)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "bench_peer_entry"


class Receipt(models.Model):
    scope = models.CharField(max_length=80)
    operation = models.CharField(max_length=40)
    request_id = models.UUIDField()
    request = models.TextField()  # the normalized request, compared on a retry
    result = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "bench_peer_receipt"
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "operation", "request_id"], name="bench_peer_receipt_identity"
            )
        ]
