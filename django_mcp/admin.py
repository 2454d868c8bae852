"""Admin of the core: legacy sessions, read-only, so staff can see who is connected and end a session."""

from typing import Any

from asgiref.sync import async_to_sync
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

    def delete_model(self, request, obj):  # type: ignore[no-untyped-def]
        self.end(obj.pk, obj.created_at)

    def delete_queryset(self, request, queryset):  # type: ignore[no-untyped-def]
        for key, created_at in queryset.values_list("pk", "created_at"):
            self.end(key, created_at)

    def end(self, key: str, created_at: Any) -> None:
        # Not a plain row delete: every worker must stop serving the session now (its cached copy,
        # its GET streams, its requests), and a young signed id must not outlive its row.
        from .transports.live_sessions import end_stored_session

        async_to_sync(end_stored_session)(key, created_at)

    def get_queryset(self, request):  # type: ignore[no-untyped-def]
        # Tombstones (McpSession.ended) stand for sessions already ended; nobody is connected there.
        return super().get_queryset(request).filter(ended=False)

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False
