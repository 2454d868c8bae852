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
from django.apps import apps
from django.contrib import admin, messages
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from .fields import allowed_models
from .models import McpQueryTool
from .serving import site_named
from .validation import validate_saved_query


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
        (_("Saved query"), {"fields": ("document",), "classes": ("collapse",)}),
        (_("What clients get"), {"fields": ("generated_input_schema", "generated_output_schema")}),
        (_("History"), {"fields": ("created", "updated"), "classes": ("collapse",)}),
    )

    def _tool(self, obj: McpQueryTool | None) -> Any:
        if obj is None or obj.pk is None:
            return str(_("Shown once saved."))
        try:
            return obj.as_tool(site_named(obj.site))
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

    # Saving a call of the model query tool as a query tool ------------------------------------------

    def get_urls(self) -> list[Any]:
        info = self.opts.app_label, self.opts.model_name
        return [path("from-call/<int:call_id>/", self.admin_site.admin_view(self.save_from_call),
                     name="%s_%s_from_call" % info), *super().get_urls()]

    def save_from_call(self, request: HttpRequest, call_id: int) -> HttpResponse:
        """
        The call log's "Save as a query tool" (a POST): the call's query document becomes a saved
        query row, disabled until staff name, describe and enable it on the page this redirects to.
        """
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_add_permission(request):
            raise PermissionDenied
        try:
            call = apps.get_model("django_mcp_call_log", "McpToolCall").objects.get(pk=call_id)
        except (LookupError, ObjectDoesNotExist):
            raise Http404("No such call") from None
        back = reverse(f"{self.admin_site.name}:django_mcp_call_log_mcptoolcall_change", args=[call.pk])
        site = site_named(call.site)
        tool = site.get_tool(call.tool) if site is not None else None
        if not getattr(tool, "savable_as_query_tool", False) or not isinstance(call.arguments, dict):
            messages.error(request, _("Only a call of the model query tool can be saved as a query tool."))
            return HttpResponseRedirect(back)
        row = McpQueryTool(site=call.site, name=self.free_name(call), document=call.arguments, enabled=False, fields=[],
                           description=_("Saved from the call log: call %(id)s by %(user)s.") % {
                               "id": call.pk, "user": call.username or _("an anonymous client")})
        try:
            validate_saved_query(row, site)
            row.full_clean()
        except ValidationError as error:
            messages.error(request, _("This query cannot be saved: %(problems)s") % {
                "problems": " ".join(error.messages)})
            return HttpResponseRedirect(back)
        row.save()
        self.log_addition(request, row, [{"added": {}}])
        messages.success(request, _("Saved as the query tool %(name)s, disabled: name and describe it for the "
                                    "model, then enable it.") % {"name": row.name})
        return HttpResponseRedirect(reverse(f"{self.admin_site.name}:{self.opts.app_label}_{self.opts.model_name}"
                                            "_change", args=[row.pk]))

    @staticmethod
    def free_name(call: Any) -> str:
        name, number = f"saved_query_{call.pk}", 1
        while McpQueryTool.objects.filter(site=call.site, name=name).exists():
            number += 1
            name = f"saved_query_{call.pk}_{number}"
        return name
