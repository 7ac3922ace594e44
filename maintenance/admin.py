"""Raw records, read-only (SPEC 7): an endpoint's secrets are never shown, and its URL
only as scheme and host (webhook URLs often carry a secret in their path or query)."""

from django.contrib import admin

from maintenance.deliveries.endpoints import endpoint_display_url
from maintenance.deliveries.models import Delivery, DeliveryAttempt, Endpoint
from receipts.admin import ReadOnlyAdmin


@admin.register(Endpoint)
class EndpointAdmin(ReadOnlyAdmin):
    list_display = ["name", "address", "supports", "enabled", "disabled_reason", "allow_private",
                    "created_at"]
    exclude = ["url", "lookup_url", "secret", "previous_secret"]
    readonly_fields = ["address"]

    @admin.display(description="URL (scheme and host)")
    def address(self, endpoint: Endpoint) -> str:
        return endpoint_display_url(endpoint, full=False)


class AttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    fields = ["attempt_id", "kind", "started_at", "duration_ms", "status_code", "error",
              "request_left"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ["id", "endpoint", "entry_id", "state", "attempts", "created_at",
                    "settled_at"]
    list_filter = ["state", "endpoint"]
    inlines = [AttemptInline]
