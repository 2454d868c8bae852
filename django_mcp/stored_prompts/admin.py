"""Prompts staff write, in the admin, with a preview."""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from .models import McpPrompt


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
    change_form_template = "admin/django_mcp_stored_prompts/mcpprompt/change_form.html"

    def get_urls(self):  # type: ignore[no-untyped-def]
        from django.urls import path

        preview = self.admin_site.admin_view(self.preview_view)
        name = f"{self.opts.app_label}_{self.opts.model_name}_preview"
        return [path("<path:object_id>/preview/", preview, name=name), *super().get_urls()]

    def preview_view(self, request, object_id):  # type: ignore[no-untyped-def]
        from django.core.exceptions import PermissionDenied
        from django.http import Http404
        from django.template.response import TemplateResponse

        from .preview import preview

        row = self.get_object(request, object_id)
        if row is None:
            raise Http404(f"No MCP prompt {object_id}")
        if not self.has_view_or_change_permission(request, row):
            raise PermissionDenied
        context = {**self.admin_site.each_context(request), "opts": self.opts, "original": row,
                   "title": _("Preview of %(name)s") % {"name": row.name}, **preview(row, request)}
        return TemplateResponse(request, "admin/django_mcp_stored_prompts/mcpprompt/preview.html", context)
