"""The admin for every tool: a row per tool with a switch, overrides, who may use it, a rate limit and argument logging."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from .models import McpTool
from .policies import parse_rate


class OptionalJSONField(forms.JSONField):
    """A JSON field that shows nothing, rather than ``null``, when there is no value."""

    def prepare_value(self, value: Any) -> Any:
        return "" if value is None else super().prepare_value(value)


class McpToolForm(forms.ModelForm):
    """Checks the rate limit's format and the annotation overrides' shape when saved."""

    annotations = OptionalJSONField(required=False, label=_("annotation overrides"),
                                    help_text=McpTool._meta.get_field("annotations").help_text)

    class Meta:
        model = McpTool
        fields = "__all__"

    def clean_rate_limit(self) -> str:
        value = self.cleaned_data.get("rate_limit", "")
        try:
            parse_rate(value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return value.strip()

    def clean_annotations(self) -> Any:
        value = self.cleaned_data.get("annotations")
        known = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
        if value in (None, "", {}):
            return None
        if not isinstance(value, dict) or set(value) - known:
            raise forms.ValidationError(_("An object with some of: %(keys)s.") % {"keys": ", ".join(sorted(known))})
        return value


@admin.register(McpTool)
class McpToolAdmin(admin.ModelAdmin):
    """Every tool, from code or from the admin: switch it on or off, restrict it, limit it."""

    form = McpToolForm
    # Kept narrow enough for a laptop screen; logging and dates are on the change page and in the filters.
    list_display = ("name", "enabled", "source", "title", "access", "rate_limit", "state")
    list_editable = ("enabled",)
    list_filter = ("enabled", "source", "orphaned", "log_arguments")
    search_fields = ("name", "title", "description")
    filter_horizontal = ("permissions", "groups")
    readonly_fields = ("site", "name", "source", "state", "definition", "created", "updated")
    actions = ("enable_tools", "disable_tools")
    fieldsets = (
        (None, {"fields": ("site", "name", "source", "state", "enabled")}),
        (_("What clients see"), {"fields": ("title", "description", "annotations", "definition")}),
        (_("Who may use it"), {"fields": ("permissions", "groups", "required_scopes")}),
        (_("Limits and logging"), {"fields": ("rate_limit", "log_arguments")}),
        (None, {"fields": ("created", "updated")}),
    )

    def has_add_permission(self, request: Any) -> bool:
        # Rows come from the code (or from query tools); staff decide about them, they do not invent them.
        return False

    @admin.display(description=_("restricted to"))
    def access(self, obj: McpTool) -> str:
        parts = [*(f"{p.content_type.app_label}.{p.codename}" for p in obj.permissions.all()),
                 *(f"group {g.name}" for g in obj.groups.all()), *obj.required_scopes.split()]
        return ", ".join(parts) or self.get_empty_value_display()

    @admin.display(description=_("state"))
    def state(self, obj: McpTool) -> str:
        # Only the exception is worth a word: a tool the code no longer defines.
        return str(_("orphaned: no longer in the code")) if obj.orphaned else ""

    @admin.display(description=_("definition in code"))
    def definition(self, obj: McpTool) -> str:
        from ..sites import get_default_site

        tool = get_default_site().get_tool(obj.name) if obj.site == get_default_site().name else None
        if tool is None:
            return self.get_empty_value_display()
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>",
                           json.dumps(tool.definition(), indent=2, ensure_ascii=False))

    def get_queryset(self, request: Any) -> Any:
        return super().get_queryset(request).prefetch_related("permissions__content_type", "groups")

    @admin.action(description=_("Enable the selected tools"), permissions=["change"])
    def enable_tools(self, request: Any, queryset: Any) -> None:
        self._switch(request, queryset, True)

    @admin.action(description=_("Disable the selected tools"), permissions=["change"])
    def disable_tools(self, request: Any, queryset: Any) -> None:
        self._switch(request, queryset, False)

    def _switch(self, request: Any, queryset: Any, enabled: bool) -> None:
        # Saved one by one so each row's post_save announces the change (one announcement per commit).
        rows = list(queryset.filter(enabled=not enabled))
        for row in rows:
            row.enabled = enabled
            row.save(update_fields=["enabled", "updated"])
        self.message_user(request, _("%(count)d tool(s) %(state)s.") % {
            "count": len(rows), "state": _("enabled") if enabled else _("disabled")}, messages.SUCCESS)
