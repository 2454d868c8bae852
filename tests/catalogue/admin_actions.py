"""
A separate admin site whose catalogue admins publish actions as MCP tools
(``django_mcp.admin_actions``); ``admin.site`` and ``tests/catalogue/admin.py`` are unchanged.
"""

from django.contrib import admin, messages
from django.http import HttpResponse

from django_mcp.admin_actions import McpActionsMixin

from .models import Volume, Writer


site = admin.AdminSite(name="mcp_actions_admin")


class LengthFilter(admin.SimpleListFilter):
    """Short and long volumes, a list filter that is no model field."""

    title = "length"
    parameter_name = "length"

    def lookups(self, request, model_admin):
        return [("short", "Under 170 pages"), ("long", "170 pages or more")]

    def queryset(self, request, queryset):
        if self.value() == "short":
            return queryset.filter(pages__lt=170)
        if self.value() == "long":
            return queryset.filter(pages__gte=170)
        return None


@admin.register(Volume, site=site)
class VolumeActionsAdmin(McpActionsMixin, admin.ModelAdmin):
    list_filter = ["in_print", "format", "writer", LengthFilter]
    search_fields = ["title", "writer__name"]
    actions = ["mark_out_of_print", "withdraw", "export_titles", "reprint"]
    mcp_actions = ["mark_out_of_print", "delete_selected", "withdraw", "export_titles"]

    def get_queryset(self, request):
        # As tests/catalogue/admin.py: secret volumes are the superuser's only.
        volumes = super().get_queryset(request)
        return volumes if request.user.is_superuser else volumes.filter(secret=False)

    @admin.action(permissions=["change"], description="Mark selected %(verbose_name_plural)s as out of print")
    def mark_out_of_print(self, request, queryset):
        count = queryset.update(in_print=False)
        self.message_user(request, f"{count} marked as out of print.", messages.SUCCESS)

    @admin.action(permissions=["delete"], description="Withdraw selected %(verbose_name_plural)s")
    def withdraw(self, request, queryset):
        queryset.update(secret=True)

    @admin.action(permissions=["view"], description="Export the titles")
    def export_titles(self, request, queryset):
        return HttpResponse("\n".join(queryset.values_list("title", flat=True)), content_type="text/plain")

    @admin.action(permissions=["change"])
    def reprint(self, request, queryset):
        queryset.update(in_print=True)


@admin.register(Writer, site=site)
class WriterActionsAdmin(McpActionsMixin, admin.ModelAdmin):
    search_fields = ["name"]
    mcp_actions = "__all__"
