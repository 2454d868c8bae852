"""
The admin of query tools (:class:`~django_mcp.query_tools.models.McpQueryTool`): staff pick a model
the site publishes, the fields to return, the filters to offer and the order, and see the
``inputSchema`` and ``outputSchema`` clients will get. Registered on ``django.contrib.admin.site``
when imported (``django_mcp.admin`` imports it).
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from .fields import allowed_models
from .models import McpQueryTool
from .serving import site_named
from .tools import QueryTool


class McpQueryToolForm(forms.ModelForm):
    """
    Offers only the models the row's site publishes (any model when it publishes none). Fields,
    filters and ordering are checked against the chosen model by ``McpQueryTool.clean()``, which
    the form runs, so every problem is shown on its field.
    """

    class Meta:
        model = McpQueryTool
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The site of this submission, else the one asked for (?site=…), else the row's: the choices follow it.
        name = (self.data.get(self.add_prefix("site")) if self.is_bound else self.initial.get("site")) \
            or self.instance.site or "default"
        site = site_named(name)
        by_model = ContentType.objects.get_for_models(*allowed_models(site))
        self.fields["model"].queryset = ContentType.objects.filter(
            pk__in=[content_type.pk for content_type in by_model.values()]).order_by("app_label", "model")
        self.fields["model"].help_text = _("Models the site %(site)s publishes as resources (any model when it "
                                           "publishes none).") % {"site": repr(name)}


def _schema_block(schema: dict[str, Any]) -> str:
    return format_html('<pre style="white-space: pre-wrap; margin: 0">{}</pre>',
                       json.dumps(schema, indent=2, ensure_ascii=False))


@admin.register(McpQueryTool)
class McpQueryToolAdmin(admin.ModelAdmin):
    """Query tools over a model, defined without code; the generated schemas are shown read-only."""

    form = McpQueryToolForm
    list_display = ("name", "site", "model", "row_limit", "enabled", "updated")
    list_filter = ("enabled", "site")
    search_fields = ("name", "title", "description")
    readonly_fields = ("generated_input_schema", "generated_output_schema", "created", "updated")
    fieldsets = (
        (None, {"fields": ("site", "name", "title", "description", "enabled")}),
        (_("Query"), {"fields": ("model", "fields", "filters", "ordering", "row_limit")}),
        (_("What clients get"), {"fields": ("generated_input_schema", "generated_output_schema")}),
        (_("History"), {"fields": ("created", "updated"), "classes": ("collapse",)}),
    )

    def _tool(self, obj: McpQueryTool | None) -> QueryTool | str:
        if obj is None or obj.pk is None:
            return str(_("Shown once saved."))
        try:
            return QueryTool(obj, site_named(obj.site))
        except Exception as error:  # noqa: BLE001
            # A saved row its model no longer fits: say why rather than break the page.
            return str(_("This row does not make a tool: %(error)s") % {"error": error})

    @admin.display(description=_("input schema"))
    def generated_input_schema(self, obj: McpQueryTool | None) -> str:
        tool = self._tool(obj)
        return tool if isinstance(tool, str) else _schema_block(tool.input_schema or {})

    @admin.display(description=_("output schema"))
    def generated_output_schema(self, obj: McpQueryTool | None) -> str:
        tool = self._tool(obj)
        return tool if isinstance(tool, str) else _schema_block(tool.output_schema or {})
