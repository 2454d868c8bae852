"""
Query tools staff define in the admin (:class:`~django_mcp.query_tools.models.McpQueryTool`),
served as tools of a site (MCP spec 2025-11-25, server/tools): :class:`QueryTool` is one row made
into a :class:`~django_mcp.tools.base.Tool`; :class:`~django_mcp.query_tools.source.QueryToolSource`
lists the enabled rows after the tools in code.

A call filters the model's rows by the arguments given (one per field and lookup the row offers),
orders them, and returns at most ``row_limit`` of them with a ``nextCursor`` when more follow. The
cursor is signed and bound to the tool and its arguments; one that was forged, or minted for other
arguments or another tool, is refused with JSON-RPC ``-32602`` (invalid params), as a bad cursor of
a listing is (MCP spec 2025-11-25, server/utilities/pagination).

Who sees what: the tool needs the model's ``view`` permission to be listed or called. When the
site publishes the model with a ``ModelResource``, rows come from its ``get_queryset(ctx)`` (its
row-level rules) and are written by its serializer; otherwise from ``values()`` made JSON-safe.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from ..context import Context
from ..cursors import decode_cursor, encode_cursor
from ..permissions import HasPermission
from ..protocol.context import RequestContext
from ..protocol.errors import InvalidParams
from ..model_resources.keyset import Keyset
from ..resources.model_schema import json_schema, target_field
from ..threads import in_thread
from ..tools.base import Tool
from ..tools.results import InvalidArguments
from .fields import CURSOR_ARGUMENT, MAX_ROW_LIMIT, argument_name, published_fields

logger = logging.getLogger("django_mcp.tools")

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
LOOKUP_WORDS = {"exact": "equals", "iexact": "equals, ignoring case", "contains": "contains",
                "icontains": "contains, ignoring case", "gt": "greater than", "gte": "at least", "lt": "less than",
                "lte": "at most", "range": "between (inclusive), as [low, high]", "in": "one of",
                "isnull": "is empty (true) or set (false)"}

def model_resource(site: Any, model: Any) -> Any:
    """The ``ModelResource`` publishing ``model`` on ``site``, or None."""
    options = site.model_options_or_none(model) if site is not None else None
    if options is None:
        return None
    from ..model_resources.options import ModelResource

    return options if isinstance(options, ModelResource) else None


# Schemas -----------------------------------------------------------------------------------------------


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    """A field's schema without its ``null`` alternative: arguments that are null are simply not applied."""
    return dict(schema["anyOf"][0]) if "anyOf" in schema else dict(schema)


def argument_schema(field: Any, lookup: str) -> dict[str, Any]:
    """The JSON Schema of the argument filtering ``field`` with ``lookup``."""
    exact = _plain(json_schema(target_field(field)))  # a relation is filtered by the related key
    compared = {key: value for key, value in exact.items() if key not in ("enum", "maxLength")}
    schema: dict[str, Any]
    if lookup == "exact":
        schema = exact
    elif lookup in ("iexact", "contains", "icontains"):
        schema = {"type": "string"}
    elif lookup == "range":
        schema = {"type": "array", "items": compared, "minItems": 2, "maxItems": 2}
    elif lookup == "in":
        schema = {"type": "array", "items": exact}
    elif lookup == "isnull":
        schema = {"type": "boolean"}
    else:
        schema = compared
    schema["description"] = f"{str(field.verbose_name).capitalize()} {LOOKUP_WORDS[lookup]}."
    return schema


def input_schema_for(row: Any, model: Any) -> dict[str, Any]:
    """The ``inputSchema`` of a row: its filters as optional arguments, then ``cursor``."""
    opts = model._meta
    properties: dict[str, Any] = {}
    for name, lookups in (row.filters or {}).items():
        for lookup in lookups:
            properties[argument_name(name, lookup)] = argument_schema(opts.get_field(name), lookup)
    properties[CURSOR_ARGUMENT] = {"type": "string", "description": "nextCursor of the previous call, for more rows."}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def column_schema(name: str, field: Any, resource: Any) -> dict[str, Any]:
    """The JSON Schema of one returned column, as ``values()`` or the resource's serializer writes it."""
    if resource is None:
        schema = json_schema(target_field(field)) if field.is_relation else json_schema(field)
        if field.is_relation and field.null and "anyOf" not in schema:
            schema = {"anyOf": [schema, {"type": "null"}]}
        return schema
    from ..model_resources.serializers import ResourceLinkField
    from ..tools.field_schemas import drf_field_schema, key_schema

    written = resource.get_serializer_class()().fields[name]
    if isinstance(written, ResourceLinkField):
        # A link when the related model is published, else its key (ResourceLinkField.to_representation).
        schema = {"type": "string", "format": "uri"} if resource.related_uri_template(written.related_model) \
            else key_schema(written.related_model)
        return {"anyOf": [schema, {"type": "null"}]} if written.allow_null else schema
    return drf_field_schema(written, output=True) or {}


def output_schema_for(columns: dict[str, Any], resource: Any) -> dict[str, Any]:
    row = {"type": "object", "properties": {name: column_schema(name, field, resource)
                                            for name, field in columns.items()}, "required": list(columns)}
    return {"type": "object", "properties": {
        "rows": {"type": "array", "items": row},
        "nextCursor": {"type": "string", "description": "Pass as `cursor`, with the same arguments, for more rows."},
    }, "required": ["rows"]}


# The tool ----------------------------------------------------------------------------------------------


def _scalar(field: Any, value: Any) -> Any:
    if isinstance(value, (dict, list)):
        raise ValidationError("a single value is expected")
    value = field.to_python(value)
    if isinstance(value, datetime.datetime) and settings.USE_TZ and timezone.is_naive(value):
        value = timezone.make_aware(value)  # a naive time is the site's time zone, as in forms
    return value


class QueryTool(Tool):
    """One :class:`~django_mcp.query_tools.models.McpQueryTool` row as a read-only tool of ``site``."""

    annotations = READ_ONLY

    def __init__(self, row: Any, site: Any) -> None:
        model = row.model.model_class()
        if model is None:
            raise ValueError(f"Query tool {row.name!r}: its model no longer exists.")
        opts = model._meta
        self.row_pk, self.site, self.model = row.pk, site, model
        self.resource = model_resource(site, model)
        published = published_fields(model, self.resource)
        # A column the model or its resource stopped publishing is left out rather than leaked.
        self.columns = {name: published[name] for name in row.fields if name in published}
        self.arguments = {argument_name(name, lookup): (opts.get_field(name), lookup)
                          for name, lookups in (row.filters or {}).items() for lookup in lookups}
        self.ordering = list(row.ordering or [])
        self.row_limit = max(1, min(row.row_limit or 1, MAX_ROW_LIMIT))
        try:
            self.keyset: Keyset | None = Keyset(model, self.ordering)
        except ImproperlyConfigured:
            self.keyset = None  # a nullable column in the ordering: pages by offset instead
        self.name = row.name
        self.title = row.title or None
        self.description = row.description or (
            f"Find {opts.verbose_name_plural}" + (f" by {', '.join(row.filters)}" if row.filters else "")
            + f"; at most {self.row_limit} rows per call, with a nextCursor for more.")
        self.permission_classes = [HasPermission(f"{opts.app_label}.view_{opts.model_name}")]
        self.input_schema = input_schema_for(row, model)
        self.output_schema = output_schema_for(self.columns, self.resource)
        super().__init__()

    # Arguments --------------------------------------------------------------------------------------

    async def validated_arguments(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """The ORM filters and the cursor; :class:`InvalidArguments` names each bad argument."""
        lookups: dict[str, Any] = {}
        problems = [f"{name}: unknown argument" for name in arguments if name not in self.arguments
                    and name != CURSOR_ARGUMENT]
        cursor = arguments.get(CURSOR_ARGUMENT)
        if cursor is not None and not isinstance(cursor, str):
            problems.append(f"{CURSOR_ARGUMENT}: a string is expected")
        given = {name: value for name, value in arguments.items() if name in self.arguments and value is not None}
        for name, value in given.items():
            field, lookup = self.arguments[name]
            try:
                lookups[f"{field.name}__{lookup}"] = self.convert(field, lookup, value)
            except (ValidationError, TypeError, ValueError) as error:
                detail = "; ".join(error.messages) if isinstance(error, ValidationError) else str(error)
                problems.append(f"{name}: {detail}")
        if problems:
            raise InvalidArguments("; ".join(problems))
        return {"lookups": lookups, "cursor": cursor or None, "given": given}

    def convert(self, field: Any, lookup: str, value: Any) -> Any:
        if lookup == "isnull":
            if not isinstance(value, bool):
                raise ValidationError("true or false is expected")
            return value
        if lookup in ("iexact", "contains", "icontains"):
            if not isinstance(value, str):
                raise ValidationError("a string is expected")
            return value
        if lookup in ("range", "in"):
            if not isinstance(value, list) or (lookup == "range" and len(value) != 2):
                raise ValidationError("a list of two values is expected" if lookup == "range" else "a list is expected")
            return [_scalar(field, item) for item in value]
        return _scalar(field, value)

    # Calling ----------------------------------------------------------------------------------------

    def digest(self, given: dict[str, Any]) -> str:
        # What a cursor is bound to: this tool, its order and way of paging, and the arguments.
        shape = [self.name, self.row_pk, self.ordering, self.keyset is not None, given]
        return hashlib.sha256(json.dumps(shape, sort_keys=True, cls=DjangoJSONEncoder).encode()).hexdigest()[:24]

    async def call(self, ctx: Context, lookups: dict[str, Any], cursor: str | None,
                   given: dict[str, Any]) -> dict[str, Any]:
        digest = self.digest(given)
        position = None
        if cursor:
            payload = decode_cursor(cursor)
            if not (isinstance(payload, list) and len(payload) == 3 and payload[:2] == ["query", digest]):
                raise InvalidParams("Invalid cursor: it belongs to another tool or other arguments", {"cursor": cursor})
            position = payload[2]
            if self.keyset is None and not (isinstance(position, int) and not isinstance(position, bool)
                                            and position >= 0):
                raise InvalidParams("Invalid cursor", {"cursor": cursor})
        rows, after = await in_thread(self.fetch)(ctx, lookups, position)
        if self.resource is not None and self.resource.object_permissions:
            # Object permissions may be async or ask the database: asked row by row, as search tools do.
            rows = [row for row in rows if await self.resource.has_object_permission(ctx, row)]
        structured: dict[str, Any] = {"rows": await in_thread(self.present)(rows, ctx)}
        if after is not None:
            structured["nextCursor"] = encode_cursor(["query", digest, after])
        return {"content": [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}],
                "structuredContent": structured, "isError": False}

    def queryset(self, ctx: Context) -> Any:
        if self.resource is not None:
            return self.resource.get_queryset(ctx)  # the resource's row-level rules
        return self.model._default_manager.all()

    def fetch(self, ctx: Context, lookups: dict[str, Any], position: Any) -> tuple[list[Any], Any]:
        """At most ``row_limit`` rows after ``position``, and the position after them when more follow."""
        rows = self.queryset(ctx).filter(**lookups)
        keyset = self.keyset
        if keyset is not None:
            rows = keyset.after(rows, position)
        else:
            rows = rows.order_by(*self.ordering, "pk")
        if self.resource is None:
            extra = [field.attname for field, _ in keyset.columns] if keyset is not None else []
            rows = rows.values(*self.columns, *[name for name in extra if name not in self.columns])
        start = position if keyset is None and position is not None else 0
        found = list(rows[start:start + self.row_limit + 1])
        page, more = found[:self.row_limit], len(found) > self.row_limit
        if not more:
            return page, None
        if keyset is None:
            return page, start + self.row_limit
        last = page[-1]
        return page, keyset.position_of(last if self.resource is not None else _Values(last))

    def present(self, rows: list[Any], ctx: Context) -> list[dict[str, Any]]:
        """The rows as JSON data with the chosen columns only."""
        if self.resource is not None:
            return [{name: item[name] for name in self.columns if name in item}
                    for item in self.resource.serialize_many(rows, ctx)]
        # DjangoJSONEncoder: dates and times in ISO 8601, decimals and UUIDs as strings.
        return json.loads(json.dumps([{name: row[name] for name in self.columns} for row in rows],
                                     cls=DjangoJSONEncoder))


class _Values:
    """A ``values()`` dict read through attributes, as ``Field.value_to_string`` reads a row."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)
