from django.apps import apps
from django.contrib import admin

from moderation.models import AuditEvent
from receipts.admin import ReadOnlyAdmin


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor", "action", "target_type", "target_ids", "reason"]
    list_filter = ["action"]


# django-otp's admin would show each authenticator's secret and let anyone with the admin
# remove a second factor unaudited; `manage.py reset_2fa` is the way (SPEC 7.1).
for _model in ("otp_totp.TOTPDevice", "otp_static.StaticDevice"):
    try:
        admin.site.unregister(apps.get_model(_model))
    except admin.sites.NotRegistered:
        pass
