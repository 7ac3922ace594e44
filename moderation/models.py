from django.db import models


class AuditEvent(models.Model):
    """One operator action: who, when, what, on which ids, and why. Never an entry's text."""

    created_at = models.DateTimeField(db_index=True)
    actor = models.CharField(max_length=150)
    action = models.CharField(max_length=40, db_index=True)
    target_type = models.CharField(max_length=40, blank=True, default="")
    target_ids = models.JSONField(default=list)
    reason = models.TextField(blank=True, default="")
    details = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action}"
