"""
Query tools staff define in the admin (:class:`McpQueryTool`): a read-only search over one model,
its filters, columns and order chosen from the model's fields, published as a tool without code.
This module holds the row, the checks it passes before it is saved, and what saving and deleting
it tells the rest of the system. The tool itself is built in ``query_tools.py``.

Imported by ``django_mcp.models`` so Django finds the model.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models, transaction
from django.utils.translation import gettext_lazy as _


#: Most rows one call returns, whatever a row asks: a page must stay small enough for a model's context.
MAX_ROW_LIMIT = 100
#: The lookups staff may offer as arguments.
LOOKUPS = ("exact", "iexact", "contains", "icontains", "gt", "gte", "lt", "lte", "range", "in", "isnull")
TEXT_LOOKUPS = frozenset({"iexact", "contains", "icontains"})
ORDER_LOOKUPS = frozenset({"gt", "gte", "lt", "lte", "range"})
#: The argument that carries the cursor, so no filter may take its name.
CURSOR_ARGUMENT = "cursor"


class McpQueryTool(models.Model):
    """
    A read-only query tool staff define in the admin: rows of one model, filtered by the arguments
    the client passes (one per field and lookup offered), ordered, and returned a page at a time
    (MCP spec 2025-11-25, server/tools). Saving or deleting a row sends
    ``notifications/tools/list_changed`` and keeps the tool's :class:`~django_mcp.models.McpTool`
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
    fields = models.JSONField(_("fields returned"), default=list, help_text=_(
        'The fields each row returns, e.g. ["id", "title", "published"].'))
    filters = models.JSONField(_("filters"), default=dict, blank=True, help_text=_(
        'Field → lookups offered as arguments, e.g. {"title": ["icontains"], "pages": ["gte", "lte"]}. Lookups: '
        + ", ".join(LOOKUPS) + "."))
    ordering = models.JSONField(_("ordering"), default=list, blank=True, help_text=_(
        'Fields to order by, "-" for descending, e.g. ["-published", "title"]; the primary key breaks ties.'))
    row_limit = models.PositiveSmallIntegerField(_("rows per call"), default=25, validators=[
        MinValueValidator(1), MaxValueValidator(MAX_ROW_LIMIT)], help_text=_("At most 100."))
    enabled = models.BooleanField(_("enabled"), default=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)
    updated = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        app_label = "django_mcp"
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
        validate_row(self)

    def as_tool(self, site: Any) -> Any:
        """The :class:`~django_mcp.tools.query_tools.QueryTool` this row stands for on ``site``."""
        from .query_tools import QueryTool

        return QueryTool(self, site)


# Checks ------------------------------------------------------------------------------------------------


def published_fields(model: Any, resource: Any = None) -> dict[str, Any]:
    """
    Name → model field of what a query tool may return, filter and order on: the concrete fields,
    and when the model is published by a ``ModelResource``, only those its serializer writes, so a
    query tool never reaches what the developer kept out (a secret flag, an owner).
    """
    fields = {field.name: field for field in model._meta.concrete_fields}
    if issubclass(model, AbstractBaseUser):
        fields.pop("password", None)  # never, even for superusers choosing "any model"
    if resource is not None:
        written = resource.get_serializer_class()().fields
        fields = {name: field for name, field in fields.items() if name in written}
    return fields


def filterable(field: Any) -> bool:
    # JSON documents and files have no lookups a client could use sensibly here.
    return not isinstance(field, (models.JSONField, models.FileField, models.BinaryField))


def lookup_problem(field: Any, lookup: str) -> str | None:
    """Why ``lookup`` does not fit ``field``, or None."""
    if lookup not in LOOKUPS:
        return f"unknown lookup {lookup!r}; known: {', '.join(LOOKUPS)}"
    if lookup in TEXT_LOOKUPS and not isinstance(field, (models.CharField, models.TextField)):
        return f"{lookup} is for text fields"
    if lookup in ORDER_LOOKUPS and isinstance(field, models.BooleanField):
        return f"{lookup} does not apply to a boolean"
    if lookup == "isnull" and not field.null:
        return "isnull needs a field that allows NULL"
    return None


def argument_name(field_name: str, lookup: str) -> str:
    """``title`` + ``icontains`` → ``title__icontains``; ``exact`` is the bare field name."""
    return field_name if lookup == "exact" else f"{field_name}__{lookup}"


def check_fields(value: Any, published: dict[str, Any]) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(name, str) for name in value):
        return ['A non-empty list of field names, e.g. ["id", "title"].']
    if len(set(value)) != len(value):
        return ["A field is listed twice."]
    unknown = [name for name in value if name not in published]
    return [f"Not a field this tool may return: {', '.join(unknown)}. Choose among {', '.join(published)}."] \
        if unknown else []


def check_filters(value: Any, published: dict[str, Any]) -> list[str]:
    if not isinstance(value, dict):
        return ['An object of field → list of lookups, e.g. {"title": ["icontains"]}.']
    errors = []
    for name, lookups in value.items():
        field = published.get(name)
        if field is None or not filterable(field):
            errors.append(f"{name!r} is not a field this tool may filter on.")
            continue
        if not isinstance(lookups, list) or not lookups or len(set(map(str, lookups))) != len(lookups):
            errors.append(f"{name!r}: a non-empty list of different lookups.")
            continue
        for lookup in lookups:
            problem = lookup_problem(field, lookup) if isinstance(lookup, str) else "lookups are strings"
            if problem:
                errors.append(f"{name!r}: {problem}.")
            elif argument_name(name, lookup) == CURSOR_ARGUMENT:
                errors.append(f"{name!r}: its argument would be called {CURSOR_ARGUMENT!r}, which carries the cursor.")
    return errors


def check_ordering(value: Any, published: dict[str, Any]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(entry, str) for entry in value):
        return ['A list of field names, "-" before a name for descending, e.g. ["-published", "title"].']
    names = [entry.removeprefix("-") for entry in value]
    if len(set(names)) != len(names):
        return ["A field is listed twice."]
    unknown = [name for name in names if name not in published or not filterable(published[name])]
    return [f"Cannot order by {', '.join(unknown)}."] if unknown else []


def allowed_models(site: Any) -> list[Any]:
    """The models a query tool of ``site`` may read: those it publishes, or any when it publishes none."""
    every = apps.get_models()
    if site is None:
        return list(every)
    registered = [model for model in every if site.model_options_or_none(model) is not None]
    return registered or list(every)


def validate_row(row: McpQueryTool) -> None:
    """``McpQueryTool.clean()``: each problem on its field, so the admin shows it where it belongs."""
    from .query_tools import model_resource, site_named

    errors: dict[str, list[str]] = {}
    site = site_named(row.site)
    model = row.model.model_class() if row.model_id else None
    if row.model_id and model is None:
        errors["model"] = ["This model no longer exists."]
    elif model is not None and model not in allowed_models(site):
        errors["model"] = [f"The site {row.site!r} does not publish {model._meta.label}; choose a model it publishes."]
    if model is not None and "model" not in errors:
        published = published_fields(model, model_resource(site, model))
        for name, check in (("fields", check_fields), ("filters", check_filters), ("ordering", check_ordering)):
            problems = check(getattr(row, name), published)
            if problems:
                errors[name] = problems
    in_code = site.get_registered("tool", row.name) if row.name and site is not None else None
    if in_code is not None:
        errors["name"] = [f"A tool in code has this name ({in_code.origin()}); this one would never be served."]
    if errors:
        raise ValidationError(errors)


# What saving and deleting tell ------------------------------------------------------------------------------


def _announce() -> None:
    # This worker reads the query tools again at once (a test's transaction may never commit);
    # every worker, and every listening client, learns of it once the change is committed.
    from ..snapshots import snapshots
    from .signals import send_tools_changed

    snapshots.forget()
    transaction.on_commit(send_tools_changed)


def _orphan(site: str, name: str) -> None:
    from .models import McpTool

    McpTool.objects.filter(site=site, name=name, source=McpTool.ADMIN).update(orphaned=True)


def _saved(sender: Any, instance: McpQueryTool, raw: bool = False, **kwargs: Any) -> None:
    from .models import McpTool

    if raw:
        return  # loaddata: the fixture brings its McpTool rows along
    # The McpTool row is where staff restrict and rate-limit the tool, as for tools in code.
    tool, created = McpTool.objects.get_or_create(site=instance.site, name=instance.name,
                                                  defaults={"source": McpTool.ADMIN})
    if not created and tool.orphaned and tool.source == McpTool.ADMIN:
        McpTool.objects.filter(pk=tool.pk).update(orphaned=False)
    before = getattr(instance, "_saved_as", None)
    if before is not None and before != (instance.site, instance.name):
        _orphan(*before)
    instance._saved_as = (instance.site, instance.name)
    _announce()


def _deleted(sender: Any, instance: McpQueryTool, **kwargs: Any) -> None:
    # Kept, marked orphaned, so its settings and call log stay (as for tools removed from code).
    _orphan(instance.site, instance.name)
    _announce()


models.signals.post_save.connect(_saved, sender=McpQueryTool, dispatch_uid="django_mcp_query_tool_saved")
models.signals.post_delete.connect(_deleted, sender=McpQueryTool, dispatch_uid="django_mcp_query_tool_deleted")
