"""
The primitives a :class:`~django_mcp.model_resources.options.ModelResource` contributes to its site:

- :class:`ModelRowTemplate`: ``<prefix>/{pk}``, one row, read through the resource's queryset;
- :class:`ModelFileTemplate`: ``<prefix>/{pk}/<field>``, the bytes of a file or image field;
- :class:`ModelSchemaResource`: ``<prefix>/$schema``, the shape of the rows;
- :class:`ModelRowSource`: the rows themselves in ``resources/list``, a keyset page at a time,
  each as a :class:`RowResource`.

They ask the resource for everything (queryset, permissions, serialization), so overriding a hook
on the ``ModelResource`` changes every way the data is reached.
"""

from __future__ import annotations

import base64
from typing import Any

from django.core.exceptions import ObjectDoesNotExist

from ..backend import handle
from ..context import Context
from ..model_options import ModelOptions
from ..protocol.context import RequestContext
from ..protocol.errors import ResourceNotFound
from ..resources.base import Resource, ResourceTemplate
from ..resources.model_schema import describe_model
from ..sources import PrimitiveSource
from ..threads import in_thread


class ModelPrimitive:
    """What the primitives of a model resource share: the model, and the resource's permissions."""

    resource: ModelOptions

    def bind(self, resource: ModelOptions) -> None:
        self.resource = resource
        #: For DjangoModelPermissions and friends, which look for the model here.
        self.model = resource.model

    def get_permissions(self) -> list[Any]:
        return self.resource.get_permissions()

    def origin(self) -> str:
        return self.resource.origin()

    def get_cache_hints(self, ctx: Context) -> dict[str, Any] | None:
        return self.resource.get_cache_hints(ctx)

    async def exists(self, uri: str, variables: dict[str, str], ctx: Context) -> bool:
        """For the row templates: whether the row exists and this request may see it."""
        value = variables.get(self.resource.lookup_url_kwarg)
        if value is None:
            return True  # the schema resource: no row to look for
        try:
            await self.resource.aget_object(ctx, value)
        except ObjectDoesNotExist:
            return False
        return True


class ModelRowTemplate(ModelPrimitive, ResourceTemplate):
    """One row of the model, as JSON, at ``<prefix>/{<lookup>}``."""

    mime_type = "application/json"

    def __init__(self, resource: ModelOptions) -> None:
        self.bind(resource)
        self.uri_template = resource.row_uri_template
        # The lookup value goes to a query, not to a path: any character it may hold is fine.
        self.opaque_variables = frozenset({resource.lookup_url_kwarg})
        self.name = resource.get_name()
        self.title = resource.get_title()
        self.description = resource.get_description()
        super().__init__()

    async def read(self, ctx: Context, **variables: str) -> Any:
        obj = await self.resource.aget_object(ctx, variables[self.resource.lookup_url_kwarg])
        return await in_thread(self.resource.serialize)(obj, ctx)

    async def get_completions(self, ctx: Context, variable: str, value: str, context: dict[str, str]) -> Any:
        return await self.resource.acomplete(ctx, variable, value)


class ModelFileTemplate(ModelPrimitive, ResourceTemplate):
    """The bytes of one file or image field of a row, as a blob, at ``<prefix>/{<lookup>}/<field>``."""

    def __init__(self, resource: ModelOptions, field_name: str) -> None:
        self.bind(resource)
        self.field_name = field_name
        self.uri_template = f"{resource.row_uri_template}/{field_name}"
        self.opaque_variables = frozenset({resource.lookup_url_kwarg})
        self.name = f"{resource.get_name()}_{field_name}"
        field = resource.opts.get_field(field_name)
        self.title = f"{resource.get_title()}: {field.verbose_name}"
        self.description = str(field.help_text) or f"The {field.verbose_name} of one {resource.opts.verbose_name}."
        super().__init__()

    async def read(self, ctx: Context, **variables: str) -> Any:
        raise NotImplementedError  # read_contents serves the bytes, with a MIME type per file

    async def read_contents(self, uri: str, variables: dict[str, str], ctx: RequestContext) -> list[dict[str, Any]]:
        context = handle(ctx)
        try:
            obj = await self.resource.aget_object(context, variables[self.resource.lookup_url_kwarg])
        except ObjectDoesNotExist:
            raise ResourceNotFound(uri) from None
        found = await in_thread(self.resource.read_file)(obj, self.field_name, uri)
        if found is None:
            raise ResourceNotFound(uri)  # the row has no file in that field
        data, mime_type = found
        return [{"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(data).decode("ascii")}]


class ModelSchemaResource(ModelPrimitive, Resource):
    """The fields of the model, their types, help texts and relations, at ``<prefix>/$schema``."""

    mime_type = "application/json"

    def __init__(self, resource: ModelOptions) -> None:
        self.bind(resource)
        self.uri = resource.schema_uri
        self.name = f"{resource.get_name()}_schema"
        self.title = f"{resource.get_title()}: schema"
        self.description = f"The fields of {resource.opts.verbose_name_plural}: types, help texts and relations."
        super().__init__()

    def read(self) -> dict[str, Any]:
        return describe_model(self.resource)


class RowResource:
    """
    One row in ``resources/list``. Made per row and page, so it is a light object with only what
    a listing asks (``kind``, ``key``, the permission question, the definition), not a
    registered :class:`Resource`; reading its URI goes through :class:`ModelRowTemplate`.
    """

    kind = "resource"
    __slots__ = ("definition", "obj", "resource", "uri")

    def __init__(self, resource: ModelOptions, obj: Any, ctx: Context) -> None:
        # Made on a worker thread with the page's rows: str(row) may follow relations, which
        # would be a query on the event loop.
        self.resource = resource
        self.obj = obj
        self.uri = resource.get_object_uri(obj)
        self.definition = resource.get_row_definition(obj, self.uri, ctx)

    @property
    def key(self) -> str:
        return self.uri

    @property
    def model(self) -> Any:
        return self.resource.model

    async def has_permission(self, ctx: Context) -> bool:
        return await self.resource.permits(ctx) and await self.resource.has_object_permission(ctx, self.obj)

    async def get_definition(self, ctx: Context) -> dict[str, Any]:
        return self.definition

    def __repr__(self) -> str:
        return f"<RowResource {self.uri!r}>"


class ModelRowSource(PrimitiveSource):
    """The rows of a model resource's queryset in ``resources/list``: one query per page."""

    kind = "resource"

    def __init__(self, resource: ModelOptions) -> None:
        self.resource = resource

    async def candidates(self, ctx: Context, position: Any, limit: int) -> tuple[list[tuple[Any, Any]], bool]:
        resource = self.resource
        if not await resource.permits(ctx):
            return [], False
        # A smaller page size of its own ends the site's page early (see SiteBackend.page).
        limit = min(limit, resource.get_page_size())
        return await in_thread(self.page)(ctx, position, limit)

    def page(self, ctx: Context, position: Any, limit: int) -> tuple[list[tuple[RowResource, Any]], bool]:
        resource, keyset = self.resource, self.resource.keyset
        rows = resource.fetch_rows(ctx, position, limit + 1)
        return [(RowResource(resource, obj, ctx), keyset.position_of(obj)) for obj in rows[:limit]], len(rows) > limit

    async def lookup(self, key: str, ctx: Context) -> Any:
        return None  # a row's URI is served by the row template

    async def match(self, uri: str, ctx: Context) -> Any:
        return None

    def __repr__(self) -> str:
        return f"<ModelRowSource {self.resource.opts.label}>"
