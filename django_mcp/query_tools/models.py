"""
Query tools staff define in the admin (:class:`McpQueryTool`): a read-only search over one model,
its filters, columns and order chosen from the model's fields, or a model query saved from the call
log (``document``, served by ``saved.py``), published as a tool without code.
The checks a row passes before it is saved are in ``validation.py``, the tool it stands for in
``tools.py``, and what saving and deleting it tell in ``signals.py``. The table keeps the name it
had when the model lived in the ``django_mcp`` app.
"""

from __future__ import annotations

from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from .fields import LOOKUPS, MAX_ROW_LIMIT


class McpQueryTool(models.Model):
    """
    A read-only query tool staff define in the admin: rows of one model, filtered by the arguments
    the client passes (one per field and lookup offered), ordered, and returned a page at a time
    (MCP spec 2025-11-25, server/tools). Saving or deleting a row sends
    ``notifications/tools/list_changed`` and keeps the tool's :class:`~django_mcp.tool_admin.models.McpTool`
    row, where staff set who may use it, in step.
    """

    site = models.CharField(_("site"), max_length=100, default="default",
                            help_text=_("The name of the MCP site that serves it."))
    name = models.CharField(_("name"), max_length=64, validators=[RegexValidator(
        r"^[a-zA-Z0-9_-]{1,64}$", _("1 to 64 letters, digits, '_' or '-': clients call the tool by this name."))])
    title = models.CharField(_("title"), max_length=200, blank=True)
    description = models.TextField(_("description"), blank=True,
                                   help_text=_("What the tool finds, for the client's model. Blank: generated."))
    model = models.ForeignKey("contenttypes.ContentType", on_delete=models.CASCADE, related_name="+",
                              verbose_name=_("model"))
    fields = models.JSONField(_("fields returned"), default=list, blank=True, help_text=_(
        'The fields each row returns, e.g. ["id", "title", "published"].'))
    filters = models.JSONField(_("filters"), default=dict, blank=True, help_text=_(
        'Field → lookups offered as arguments, e.g. {"title": ["icontains"], "pages": ["gte", "lte"]}. Lookups: '
        + ", ".join(LOOKUPS) + "."))
    ordering = models.JSONField(_("ordering"), default=list, blank=True, help_text=_(
        'Fields to order by, "-" for descending, e.g. ["-published", "title"]; the primary key breaks ties.'))
    row_limit = models.PositiveSmallIntegerField(_("rows per call"), default=25, validators=[
        MinValueValidator(1), MaxValueValidator(MAX_ROW_LIMIT)], help_text=_("At most 100."))
    document = models.JSONField(_("saved query"), null=True, blank=True, help_text=_(
        "A model query document (the query_models tool's argument), saved from the call log. When set, the "
        "tool runs it as the calling user, and the fields, filters and ordering above are not used."))
    enabled = models.BooleanField(_("enabled"), default=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)
    updated = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        db_table = "django_mcp_mcpquerytool"
        verbose_name = _("MCP query tool")
        verbose_name_plural = _("MCP query tools")
        ordering = ["site", "name"]
        constraints = [models.UniqueConstraint(fields=["site", "name"], name="django_mcp_query_tool_unique_name")]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def from_db(cls, db: Any, field_names: Any, values: Any, **kwargs: Any) -> McpQueryTool:
        # **kwargs: Django 6.1 passes fetch_mode.
        row = super().from_db(db, field_names, values, **kwargs)
        # Remembered so a rename can orphan the McpTool row of the old name.
        row._saved_as = (row.__dict__.get("site"), row.__dict__.get("name"))
        return row

    def clean(self) -> None:
        from .validation import validate_row

        validate_row(self)

    def as_tool(self, site: Any) -> Any:
        """The tool this row stands for on ``site``: a saved query, or a :class:`~django_mcp.query_tools.tools.QueryTool`."""
        if self.document is not None:
            from .saved import SavedQueryTool

            return SavedQueryTool(self, site)
        from .tools import QueryTool

        return QueryTool(self, site)
