"""
Admin: legacy sessions, read-only, so staff can see who is connected and end a session; prompts
staff write, with a preview.
"""

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from .models import McpPrompt, McpSession


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


@admin.register(McpPrompt)
class McpPromptAdmin(admin.ModelAdmin):
    """
    Prompts staff write: the template is checked when saved (``McpPrompt.clean``), and "Preview"
    renders it with sample arguments as the staff member, so embedded resources are read with
    their permissions.
    """

    list_display = ("name", "title", "enabled", "login_required", "permission", "updated_at")
    list_filter = ("enabled", "login_required")
    search_fields = ("name", "title", "description", "template")
    readonly_fields = ("created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("name", "title", "description", "enabled")}),
        (_("Template"), {"fields": ("arguments", "template")}),
        (_("Who may use it"), {"fields": ("login_required", "permission")}),
        (_("History"), {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    )
    change_form_template = "admin/django_mcp/mcpprompt/change_form.html"

    def get_urls(self):  # type: ignore[no-untyped-def]
        from django.urls import path

        preview = self.admin_site.admin_view(self.preview_view)
        return [path("<path:object_id>/preview/", preview, name="django_mcp_mcpprompt_preview"), *super().get_urls()]

    def preview_view(self, request, object_id):  # type: ignore[no-untyped-def]
        from django.core.exceptions import PermissionDenied
        from django.http import Http404
        from django.template.response import TemplateResponse

        from .prompts.preview import preview

        row = self.get_object(request, object_id)
        if row is None:
            raise Http404(f"No MCP prompt {object_id}")
        if not self.has_view_or_change_permission(request, row):
            raise PermissionDenied
        context = {**self.admin_site.each_context(request), "opts": self.opts, "original": row,
                   "title": _("Preview of %(name)s") % {"name": row.name}, **preview(row, request)}
        return TemplateResponse(request, "admin/django_mcp/mcpprompt/preview.html", context)


from .tools import admin as _tool_admin  # noqa: E402,F401  (McpTool and McpToolCall admins)
from .tools import query_admin as _query_admin  # noqa: E402,F401  (McpQueryTool admin)
