"""Admin: legacy sessions, read-only, so staff can see who is connected and end a session."""

from django.contrib import admin

from .models import McpSession


@admin.register(McpSession)
class McpSessionAdmin(admin.ModelAdmin):
    """Sessions are created by clients; staff may look and delete, not edit."""

    list_display = ("id", "protocol_version", "user_key", "created_at", "last_seen_at")
    list_filter = ("protocol_version",)
    search_fields = ("id", "user_key")
    readonly_fields = ("id", "protocol_version", "client_capabilities", "client_info", "log_level", "subscriptions",
                       "user_key", "created_at", "last_seen_at")

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False
