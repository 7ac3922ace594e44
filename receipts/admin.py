from django.contrib import admin

from receipts.models import Attempt, Receipt, Tombstone


class ReadOnlyAdmin(admin.ModelAdmin):
    """Raw records for inspection; changes go through the services, never the admin."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Receipt)
class ReceiptAdmin(ReadOnlyAdmin):
    list_display = ["request_id", "scope", "operation", "state", "result_id", "first_route",
                    "attempts", "receipt_expires_at"]
    list_filter = ["state", "first_route", "operation"]
    search_fields = ["request_id"]


@admin.register(Tombstone)
class TombstoneAdmin(ReadOnlyAdmin):
    list_display = ["key", "reason", "expires_at"]


@admin.register(Attempt)
class AttemptAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "identity", "route", "outcome", "detail"]
    list_filter = ["outcome", "route"]
