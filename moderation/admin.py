from django.contrib import admin

from moderation.models import AuditEvent
from receipts.admin import ReadOnlyAdmin


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor", "action", "target_type", "target_ids", "reason"]
    list_filter = ["action"]
