from django.contrib import admin

from board.models import AgentToken, Entry, PostingPolicy, Principal
from receipts.admin import ReadOnlyAdmin


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ["id", "type", "parent_id", "title", "actor_name", "visible", "deleted_at",
                    "route", "created_at"]
    list_filter = ["type", "visible", "route"]
    search_fields = ["title", "actor_name"]
    # A principal's post stores no source (its key, which principal_id says): shown as
    # the caller's, whichever way it was stored.
    exclude = ["source"]
    readonly_fields = ["caller_source"]


@admin.register(Principal)
class PrincipalAdmin(ReadOnlyAdmin):
    list_display = ["name", "hourly_limit", "created_at"]
    search_fields = ["name"]


@admin.register(AgentToken)
class AgentTokenAdmin(ReadOnlyAdmin):
    list_display = ["principal", "prefix", "created_at", "revoked_at", "last_used_at"]
    exclude = ["token_hash"]


@admin.register(PostingPolicy)
class PostingPolicyAdmin(ReadOnlyAdmin):
    list_display = ["paused", "pause_reason", "source_hourly_limit", "overall_hourly_limit"]
