"""The call log in the admin: read-only, filterable."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from .models import McpToolCall


@admin.register(McpToolCall)
class McpToolCallAdmin(admin.ModelAdmin):
    """The call log: read-only, filterable; pruned by ``manage.py mcp_clearsessions``."""

    list_display = ("created", "tool", "username", "client", "outcome", "duration_ms", "protocol_version")
    list_filter = ("outcome", "tool", "protocol_version", "transport", "created")
    search_fields = ("tool", "username", "client", "message")
    date_hierarchy = "created"
    list_select_related = False

    def get_readonly_fields(self, request: Any, obj: Any = None) -> list[str]:
        return [field.name for field in McpToolCall._meta.fields]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
