"""The call log in the admin: read-only, filterable."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from ..sites import site_named
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
        return [field.name for field in McpToolCall._meta.fields] + ["save_as_query_tool"]

    @admin.display(description=_("query tool"))
    def save_as_query_tool(self, obj: McpToolCall) -> str:
        """
        For a successful call of the model query tool: a button that saves its query document as a
        query tool (the query tools app's admin view; no button when that app is not installed).
        """
        try:
            url = reverse(f"{self.admin_site.name}:django_mcp_query_tools_mcpquerytool_from_call", args=[obj.pk])
        except NoReverseMatch:
            return "-"
        site = site_named(obj.site)
        tool = site.get_tool(obj.tool) if site is not None else None
        if obj.outcome != McpToolCall.OK or not getattr(tool, "savable_as_query_tool", False):
            return "-"
        # Submits the page's own form (it carries the CSRF token) to the query tools' view.
        return format_html('<button type="submit" class="button" formaction="{}" formmethod="post">{}</button>',
                           url, _("Save as a query tool"))

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
