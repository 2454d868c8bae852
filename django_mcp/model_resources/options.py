"""
:class:`ModelResource`: a Django model published as MCP resources, registered the way a
``ModelAdmin`` is::

    @django_mcp.register(Book)
    class BookResource(ModelResource):
        fields = ["title", "author", "published", "cover"]
        search_fields = ["title", "author__name"]
        tools = ["search", "get"]

        def get_queryset(self, ctx):
            return super().get_queryset(ctx).filter(library=ctx.user.library)

Each row is a resource at ``library://book/42`` (template ``library://book/{pk}``), listed a keyset
page at a time in ``resources/list``; files and images are blob resources under the row's URI; the
model's shape is at ``library://book/$schema``. Rows are read, listed, completed and searched
through :meth:`ModelResource.get_queryset` and the permission classes (by default Django's
``view`` permission of the model), so what a user may not see is reported as not found. Saving or
deleting a row tells subscribed clients, once the transaction commits (``changes.py``).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable
from typing import Any, ClassVar
from urllib.parse import quote

from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured, ValidationError
from django.db import models

from ..completions import COMPLETION_LIMIT
from ..completions import Completions
from ..context import Context
from ..model_options import ModelOptions
from ..permissions import AllowAny, BasePermission, DjangoModelPermissions, allows_object, as_permissions
from ..protocol.errors import InvalidParams
from ..threads import in_thread
from . import admin_bridge
from .keyset import Keyset
from .primitives import ModelFileTemplate, ModelRowSource, ModelRowTemplate, ModelSchemaResource
from .serializers import FILE_URI, LINK, PK_LINKS, build_serializer_class


MiB = 1024 * 1024


class ModelResource(ModelOptions):
    """
    The options of a model published as resources. Set options as class attributes (or as
    keywords of ``site.register(Model, **options)``) and override the ``get_*`` hooks for
    per-request behaviour, as with a ``ModelAdmin``.

    The site makes the instance, ``ModelResource(model, site)``: ``model`` is the registered model
    class and ``site`` the ``McpSite`` it is registered on. Options that do not fit the model (a
    ``lookup_field`` that is not unique, an unknown ``cache_scope``…) raise
    ``ImproperlyConfigured`` then, when the model is registered.
    """

    options: ClassVar[frozenset[str]] = frozenset({
        "fields", "exclude", "serializer_class", "lookup_field", "uri_prefix", "name", "title", "description",
        "ordering", "search_fields", "filter_fields", "page_size", "permission_classes", "cache_scope", "ttl_ms",
        "list_rows", "schema", "tools", "max_file_size", "use_admin", "queryable"})

    #: Field names to publish, or ``"__all__"``; one of ``fields``/``exclude``/``serializer_class`` is required.
    fields: Iterable[str] | str | None = None
    exclude: Iterable[str] | None = None
    #: A serializer of your own instead of the one built from ``fields``.
    serializer_class: Any = None
    #: The unique field that addresses a row in its URI: ``"pk"`` or, say, ``"slug"``.
    lookup_field: str = "pk"
    #: The URI of the model without the row: default ``<app label>://<model name>``.
    uri_prefix: str | None = None
    name: str | None = None
    title: str | None = None
    description: str | None = None
    #: Order of listings and searches (non-null concrete fields); the primary key breaks ties.
    ordering: Iterable[str] | None = None
    #: Fields the search tool looks in (``icontains``; ``^`` prefix for startswith, ``=`` for iexact).
    search_fields: Iterable[str] = ()
    #: Fields the search tool filters on: a list (exact match) or ``{"field": ["exact", "gte", …]}``.
    filter_fields: Iterable[str] | dict[str, Iterable[str]] = ()
    #: Rows per ``resources/list`` page and most rows a search returns; None: ``DJANGO_MCP["PAGE_SIZE"]``.
    page_size: int | None = None
    #: None: Django's ``view`` permission of the model (DjangoModelPermissions).
    permission_classes: Any = None
    #: ``"public"`` or ``"private"`` for 2026-07-28 reads; None: private unless nothing depends on the user.
    cache_scope: str | None = None
    ttl_ms: int = 0
    #: Whether the rows are listed in ``resources/list`` (they stay readable through the template).
    list_rows: bool = True
    #: Whether to publish the ``$schema`` resource describing the fields.
    schema: bool = True
    #: Read-only tools over the same rows, for clients without resources: ``"search"``, ``"get"``.
    tools: Iterable[str] = ()
    #: Files bigger than this are refused rather than read into memory.
    max_file_size: int = 10 * MiB
    #: Reuse the queryset and view permissions of the model's ``ModelAdmin`` (True: ``admin.site``'s).
    use_admin: Any = False
    #: Whether the site's query tool (``ModelQueryTool``) may read these rows, filter and join on them.
    queryable: bool = False

    def __init__(self, model: Any, site: Any) -> None:
        super().__init__(model, site)
        opts = self.opts
        # The URI template variable: named after the lookup field, as DRF's lookup_url_kwarg is.
        self.lookup_url_kwarg = self.lookup_field
        if self.cache_scope not in (None, "public", "private"):
            raise ImproperlyConfigured(f"{type(self).__qualname__}: cache_scope must be \"public\" or \"private\", "
                                       f"not {self.cache_scope!r}.")
        self.lookup_model_field = opts.pk if self.lookup_field == "pk" else self._field(self.lookup_field)
        if not (self.lookup_model_field.primary_key or self.lookup_model_field.unique):
            raise ImproperlyConfigured(f"{type(self).__qualname__}: lookup_field {self.lookup_field!r} of {opts.label} "
                                       "must be unique.")
        prefix = self.uri_prefix or f"{opts.app_label.replace('_', '-').lower()}://{opts.model_name}"
        self.prefix = prefix.rstrip("/")
        self.row_uri_template = f"{self.prefix}/{{{self.lookup_url_kwarg}}}"
        self.schema_uri = f"{self.prefix}/$schema"
        self.keyset = Keyset(model, self._ordering())
        self.model_admin = admin_bridge.model_admin_for(model, self.use_admin) if self.use_admin else None
        self.serializer = self.serializer_class or build_serializer_class(model, self.fields, self.exclude)
        self.search_lookups = [self._search_lookup(name) for name in self.search_fields]
        self.filters = self._filters()
        self._permissions = self._resolve_permissions()
        self.object_permissions = [p for p in self._permissions
                                   if type(p).has_object_permission is not BasePermission.has_object_permission]
        if self.queryable and self.object_permissions:
            # A query filters rows in SQL; a permission that judges rows one by one cannot take part.
            raise ImproperlyConfigured(f"{type(self).__qualname__}: a queryable resource's row-level rules belong in "
                                       "get_queryset(); its permission classes check objects one by one "
                                       f"({', '.join(type(p).__name__ for p in self.object_permissions)}).")
        self.file_fields = [f.name for f in opts.concrete_fields if isinstance(f, models.FileField)
                            and f.name in self.get_serializer_class()().fields]
        self.row_template = ModelRowTemplate(self)

    # Configuration ------------------------------------------------------------------------------

    def _field(self, name: str) -> Any:
        try:
            return self.opts.get_field(name)
        except FieldDoesNotExist:
            raise ImproperlyConfigured(f"{type(self).__qualname__}: {self.opts.label} has no field {name!r}.") from None

    def _ordering(self) -> list[str]:
        if self.ordering is not None:
            return list(self.ordering)
        # The model's own ordering when keyset pagination can follow it, else the primary key.
        try:
            Keyset(self.model, self.opts.ordering)
        except ImproperlyConfigured:
            return ["pk"]
        return [o for o in self.opts.ordering if isinstance(o, str)] or ["pk"]

    def _search_lookup(self, name: str) -> str:
        if name.startswith("^"):
            return f"{name[1:]}__istartswith"
        if name.startswith("="):
            return f"{name[1:]}__iexact"
        return f"{name.lstrip('@')}__icontains"

    def _filters(self) -> dict[str, tuple[Any, str]]:
        """Argument name → (model field, ORM lookup) for the search tool's filters."""
        spec = self.filter_fields
        items = spec.items() if isinstance(spec, dict) else ((name, ["exact"]) for name in spec)
        filters = {}
        for name, lookups in items:
            field = self._field(name)
            for lookup in lookups:
                argument = name if lookup == "exact" else f"{name}__{lookup}"
                filters[argument] = (field, f"{field.name}__{lookup}")
        return filters

    def _resolve_permissions(self) -> list[BasePermission]:
        if self.permission_classes is not None:
            return as_permissions(self.permission_classes)
        if self.model_admin is not None:
            return [admin_bridge.ModelAdminViewPermission(self.model_admin)]
        return [DjangoModelPermissions()]

    def origin(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__} ({self.opts.label})"

    # What the site publishes ----------------------------------------------------------------------

    def get_primitives(self) -> list[Any]:
        primitives: list[Any] = [self.row_template]
        primitives += [ModelFileTemplate(self, name) for name in self.file_fields]
        if self.schema:
            primitives.append(ModelSchemaResource(self))
        if self.tools:
            from .tools import build_tools
            primitives += build_tools(self, list(self.tools))
        return primitives

    def get_sources(self) -> list[Any]:
        return [ModelRowSource(self)] if self.list_rows else []

    def registered(self) -> None:
        from django.apps import apps

        if not apps.is_installed("django_mcp.model_resources"):
            raise ImproperlyConfigured(f"{type(self).__qualname__} registers {self.opts.label} as resources: add "
                                       '"django_mcp.model_resources" to INSTALLED_APPS.')
        from .changes import connect
        connect(self)

    def unregistered(self) -> None:
        from .changes import disconnect
        disconnect(self)

    # Names and descriptions -----------------------------------------------------------------------

    def get_name(self) -> str:
        return self.name or self.opts.model_name

    def get_title(self) -> str:
        return self.title or str(self.opts.verbose_name_plural).capitalize()

    def get_description(self) -> str:
        if self.description:
            return self.description
        doc = (self.model.__doc__ or "").strip()
        # Django writes "Book(id, title, …)" when a model has no docstring: no description in that.
        if doc and not doc.startswith(f"{self.model.__name__}("):
            return doc
        return f"One {self.opts.verbose_name}, by {self.lookup_model_field.verbose_name}."

    def get_page_size(self) -> int:
        from ..conf import mcp_settings
        return self.page_size or self.site.page_size or mcp_settings.PAGE_SIZE

    # Rows ---------------------------------------------------------------------------------------

    def get_queryset(self, ctx: Context) -> models.QuerySet:
        """The rows this request may reach; override for row-level rules (tenants, ownership)."""
        if self.model_admin is not None:
            return self.model_admin.get_queryset(admin_bridge.http_request(ctx))
        return self.model._default_manager.all()

    def get_list_queryset(self, ctx: Context) -> models.QuerySet:
        """The rows of ``resources/list`` pages; ``str(row)`` names each, so add ``select_related`` here."""
        return self.get_queryset(ctx)

    def fetch_rows(self, ctx: Context, position: Any, count: int) -> list[Any]:
        return list(self.keyset.after(self.get_list_queryset(ctx), position)[:count])

    def search(self, queryset: models.QuerySet, query: str) -> models.QuerySet:
        """Rows where every word of ``query`` matches one of ``search_fields``, as the admin searches."""
        for word in query.split():
            matches = models.Q()
            for lookup in self.search_lookups:
                matches |= models.Q(**{lookup: word})
            queryset = queryset.filter(matches)
        if any(lookup.count("__") > 1 for lookup in self.search_lookups):
            queryset = queryset.distinct()  # a match through a to-many relation repeats the row
        return queryset

    def get_object(self, ctx: Context, value: str) -> Any:
        """The row whose lookup field is ``value``, from the request's queryset; ``DoesNotExist`` otherwise."""
        try:
            value = self.lookup_model_field.to_python(value)
        except (ValidationError, TypeError, ValueError):
            raise self.model.DoesNotExist from None
        return self.get_queryset(ctx).get(**{self.lookup_field: value})

    async def aget_object(self, ctx: Context, value: str) -> Any:
        """:meth:`get_object` plus the object permissions: a row that may not be seen does not exist."""
        obj = await in_thread(self.get_object)(ctx, value)
        if not await self.has_object_permission(ctx, obj):
            raise self.model.DoesNotExist
        return obj

    def get_object_uri(self, obj: Any) -> str:
        return f"{self.prefix}/{quote(str(getattr(obj, self.lookup_field)), safe='')}"

    def get_row_definition(self, obj: Any, uri: str, ctx: Context) -> dict[str, Any]:
        """The ``Resource`` of one row in ``resources/list``."""
        return {"uri": uri, "name": str(obj)[:200] or uri, "mimeType": "application/json"}

    # Serialization ---------------------------------------------------------------------------------

    def get_serializer_class(self) -> Any:
        return self.serializer

    def get_serializer_context(self, ctx: Context | None) -> dict[str, Any]:
        return {LINK: self.link_to, FILE_URI: self.file_uri, PK_LINKS: self.links_need_pk_only,
                "request": None, "mcp_context": ctx}

    def serialize(self, obj: Any, ctx: Context | None) -> dict[str, Any]:
        """One row as JSON-able data."""
        return dict(self.get_serializer_class()(obj, context=self.get_serializer_context(ctx)).data)

    def serialize_many(self, rows: list[Any], ctx: Context | None) -> list[dict[str, Any]]:
        serializer = self.get_serializer_class()(rows, many=True, context=self.get_serializer_context(ctx))
        return [dict(item) for item in serializer.data]

    def _published(self, model: Any) -> ModelResource | None:
        options = self.site.model_options_or_none(model)
        return options if isinstance(options, ModelResource) else None

    def link_to(self, model: Any, obj: Any) -> str | None:
        """The URI of a related row if its model is published on this site."""
        target = self._published(model)
        return target.get_object_uri(obj) if target is not None else None

    def links_need_pk_only(self, model: Any) -> bool:
        target = self._published(model)
        return target is None or target.lookup_field == "pk"

    def related_uri_template(self, model: Any) -> str | None:
        target = self._published(model)
        return target.row_uri_template if target is not None else None

    def file_uri(self, obj: Any, field_name: str) -> str:
        return f"{self.get_object_uri(obj)}/{field_name}"

    def read_file(self, obj: Any, field_name: str, uri: str) -> tuple[bytes, str] | None:
        """The bytes and MIME type of a file field, or None when the row has no file there."""
        fieldfile = getattr(obj, field_name)
        if not fieldfile:
            return None
        try:
            size = fieldfile.size
        except (OSError, FileNotFoundError):
            return None
        if size > self.max_file_size:
            raise InvalidParams(f"The file at {uri} is {size} bytes, more than this server serves "
                                f"({self.max_file_size} bytes).", {"uri": uri})
        with fieldfile.open("rb") as handle:
            data = handle.read(self.max_file_size + 1)
        mime_type = mimetypes.guess_type(fieldfile.name)[0] or "application/octet-stream"
        return data, mime_type

    # Permissions ----------------------------------------------------------------------------------

    def get_permissions(self) -> list[BasePermission]:
        return self._permissions

    async def permits(self, ctx: Context) -> bool:
        """The model-level question: the row template's, asked once per request by the site."""
        return await self.site.permits(self.row_template, ctx)

    async def has_object_permission(self, ctx: Context, obj: Any) -> bool:
        if not self.object_permissions:
            return True
        return await allows_object(self.object_permissions, ctx, self.row_template, obj)

    def get_cache_hints(self, ctx: Context) -> dict[str, Any]:
        """``ttlMs`` and ``cacheScope`` of 2026-07-28 reads (MCP spec 2026-07-28, server/utilities/caching)."""
        scope = self.cache_scope
        if scope is None:
            user_independent = (type(self).get_queryset is ModelResource.get_queryset and self.model_admin is None
                                and all(type(p) is AllowAny for p in self._permissions) and not self.object_permissions)
            scope = "public" if user_independent else "private"
        return {"ttlMs": self.ttl_ms, "cacheScope": scope}

    # Completion -----------------------------------------------------------------------------------

    async def acomplete(self, ctx: Context, variable: str, value: str) -> Completions:
        if variable != self.lookup_url_kwarg:
            return Completions([])
        values = await in_thread(self.complete)(ctx, value)
        if self.object_permissions:
            values = [v for v in values if await self.has_object_permission(ctx, v)]
        keys = [str(getattr(v, self.lookup_field)) if isinstance(v, models.Model) else str(v) for v in values]
        return Completions(keys[:COMPLETION_LIMIT], has_more=len(keys) > COMPLETION_LIMIT)

    def complete(self, ctx: Context, value: str) -> list[Any]:
        """Lookup values starting with ``value``, from the request's queryset, in lookup order."""
        rows = self.get_queryset(ctx).order_by(self.lookup_field)
        if value:
            text = isinstance(self.lookup_model_field, (models.CharField, models.TextField))
            rows = rows.filter(**{f"{self.lookup_field}__{'istartswith' if text else 'startswith'}": value})
        if self.object_permissions:
            # Object permissions need the rows themselves; look a little further for hidden ones.
            return list(rows[:COMPLETION_LIMIT * 5])
        return list(rows.values_list(self.lookup_field, flat=True)[:COMPLETION_LIMIT + 1])
