"""
Read-only tools over a model resource's rows (``tools = ["search", "get"]``), for clients that show
tools but not resources. They use the resource's queryset, permissions and serializer, so they
return exactly what reading the resources would, and link each row to its resource.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from django.core.exceptions import ImproperlyConfigured
from pydantic import Field, create_model

from ..context import Context
from ..cursors import decode_cursor, encode_cursor
from ..model_options import ModelOptions
from ..protocol.errors import InvalidParams
from ..threads import in_thread
from ..tools.base import Tool, error_result
from ..tools.schemas import ArgumentsModel, schema_for_arguments
from ..resources.model_schema import python_type
from .primitives import ModelPrimitive


READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
DEFAULT_LIMIT = 10

SEARCH_OUTPUT = {
    "type": "object",
    "properties": {
        "results": {"type": "array", "items": {"type": "object"}},
        "nextCursor": {"type": "string", "description": "Pass as `cursor` for the next rows."},
    },
    "required": ["results"],
}


def build_tools(resource: ModelOptions, kinds: list[str]) -> list[Tool]:
    """The tools named in ``resource.tools``."""
    makers = {"search": SearchRows, "get": GetRow}
    unknown = sorted(set(kinds) - set(makers))
    if unknown:
        raise ImproperlyConfigured(f"{resource.origin()}: tools may be 'search' and 'get', not {', '.join(unknown)}.")
    return [makers[kind](resource) for kind in kinds]


class ModelTool(ModelPrimitive, Tool):
    """A tool whose arguments model is built from the model's fields rather than a signature."""

    annotations = READ_ONLY

    def __init__(self, resource: ModelOptions) -> None:
        self.bind(resource)
        self.input_schema = {"type": "object"}  # replaced below; skips building it from call()'s signature
        super().__init__()
        self.arguments_model = self.build_arguments()
        self.input_schema = schema_for_arguments(self.arguments_model)
        self.output = None  # call() returns the whole CallToolResult

    def build_arguments(self) -> type[ArgumentsModel]:
        raise NotImplementedError

    def present(self, rows: list[Any], ctx: Context) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The rows as data and as resource links; on a worker thread, as both may query related rows."""
        resource = self.resource
        links = [{"type": "resource_link", "uri": resource.get_object_uri(row), "name": str(row)[:200] or "row",
                  "mimeType": "application/json"} for row in rows]
        return resource.serialize_many(rows, ctx), links


class SearchRows(ModelTool):
    """``search_<model>``: rows matching words and filters, a page at a time."""

    def __init__(self, resource: ModelOptions) -> None:
        opts = resource.opts
        self.name = f"search_{resource.get_name()}"
        self.title = f"Search {opts.verbose_name_plural}"
        where = f" Words are looked for in: {', '.join(resource.search_fields)}." if resource.search_fields else ""
        self.description = (f"Find {opts.verbose_name_plural} ({resource.get_description().rstrip('.')}).{where} "
                            "Each result links to its resource.")
        self.output_schema = SEARCH_OUTPUT
        super().__init__(resource)

    def build_arguments(self) -> type[ArgumentsModel]:
        resource = self.resource
        fields: dict[str, Any] = {}
        if resource.search_fields:
            fields["query"] = (str | None, Field(None, description="Words to look for; every word must match."))
        for argument, (field, lookup) in resource.filters.items():
            kind = python_type(field)
            if field.choices and not field.is_relation:
                kind = Literal[tuple(value for value, _ in field.flatchoices)]  # type: ignore[misc]
            if lookup.endswith("__in"):
                kind = list[kind]  # type: ignore[valid-type]
            elif lookup.endswith("__isnull"):
                kind = bool
            described = f"{field.verbose_name} ({lookup.split('__', 1)[1]})"
            fields[argument] = (kind | None, Field(None, description=described))
        fields["limit"] = (int, Field(min(DEFAULT_LIMIT, resource.get_page_size()), ge=1, le=resource.get_page_size(),
                                      description="At most this many rows."))
        fields["cursor"] = (str | None, Field(None, description="nextCursor of the previous call, for more rows."))
        return create_model(f"{self.name}_arguments", __base__=ArgumentsModel, **fields)

    async def call(self, ctx: Context, **arguments: Any) -> dict[str, Any]:
        cursor = arguments.pop("cursor", None)
        limit = arguments.pop("limit")
        # A cursor is bound to the search it came from: other words or filters start over.
        digest = hashlib.sha256(json.dumps([self.name, arguments], sort_keys=True, default=str).encode()).hexdigest()[:16]
        position = None
        if cursor:
            payload = decode_cursor(cursor)
            if not (isinstance(payload, list) and len(payload) == 3 and payload[:2] == ["search", digest]):
                raise InvalidParams("Invalid cursor: it belongs to another search", {"cursor": cursor})
            position = payload[2]
        rows, more = await in_thread(self.search)(ctx, arguments, position, limit)
        last = rows[-1] if rows else None
        if self.resource.object_permissions:
            rows = [row for row in rows if await self.resource.has_object_permission(ctx, row)]
        results, links = await in_thread(self.present)(rows, ctx)
        structured: dict[str, Any] = {"results": results}
        if more and last is not None:
            structured["nextCursor"] = encode_cursor(["search", digest, self.resource.keyset.position_of(last)])
        text = json.dumps(structured, ensure_ascii=False)
        return {"content": [{"type": "text", "text": text}, *links], "structuredContent": structured, "isError": False}

    def search(self, ctx: Context, arguments: dict[str, Any], position: Any, limit: int) -> tuple[list[Any], bool]:
        resource = self.resource
        rows = resource.get_queryset(ctx)
        query = arguments.pop("query", None)
        if query:
            rows = resource.search(rows, query)
        filters = {resource.filters[name][1]: value for name, value in arguments.items() if value is not None}
        rows = resource.keyset.after(rows.filter(**filters), position)
        found = list(rows[:limit + 1])
        return found[:limit], len(found) > limit


class GetRow(ModelTool):
    """``get_<model>``: one row by its key."""

    def __init__(self, resource: ModelOptions) -> None:
        opts = resource.opts
        self.name = f"get_{resource.get_name()}"
        self.title = f"Get a {opts.verbose_name}"
        self.description = f"One {opts.verbose_name} by its {resource.lookup_model_field.verbose_name}, with all its fields."
        self.output_schema = {"type": "object"}
        super().__init__(resource)

    def build_arguments(self) -> type[ArgumentsModel]:
        resource = self.resource
        field = resource.lookup_model_field
        described = f"The {field.verbose_name} of the {resource.opts.verbose_name}."
        return create_model(f"{self.name}_arguments", __base__=ArgumentsModel,
                            **{resource.lookup_url_kwarg: (python_type(field), Field(description=described))})

    async def call(self, ctx: Context, **arguments: Any) -> dict[str, Any]:
        resource = self.resource
        value = arguments[resource.lookup_url_kwarg]
        try:
            obj = await resource.aget_object(ctx, str(value))
        except resource.model.DoesNotExist:
            return error_result(f"No {resource.opts.verbose_name} with {resource.lookup_url_kwarg} {value}.")
        [structured], links = await in_thread(self.present)([obj], ctx)
        return {"content": [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}, *links],
                "structuredContent": structured, "isError": False}
