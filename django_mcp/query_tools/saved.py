"""
Saved queries: a query tool row that holds a model query document (``McpQueryTool.document``),
saved by staff from the call log with one click, served as a tool of its own.

The document runs as the calling user through the site's
:class:`~django_mcp.model_resources.ModelQueryTool` (its options: timeout, database, caps), so a
saved query reads exactly what the user could ask for themselves: each resource's
``get_queryset(ctx)`` through every relation, and only models the user may read. Its one optional
argument is ``limit``.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError

from ..context import Context
from ..model_resources.query import answer
from ..model_resources.query.catalog import Catalog
from ..model_resources.query.errors import QueryError
from ..model_resources.query.parser import Parser
from ..model_resources.query.tool import ModelQueryTool
from ..permissions import HasPermission
from ..protocol.context import RequestContext
from ..tools.base import Tool
from ..tools.results import InvalidArguments

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def query_engine(site: Any) -> ModelQueryTool:
    """The site's registered model query tool (its options), or one with the default options."""
    for tool in site.tools:
        if isinstance(tool, ModelQueryTool):
            return tool
    return ModelQueryTool(site=site)


def validate_document(row: Any, site: Any) -> Any:
    """The model the row's document queries; ``ValidationError`` on ``document`` when it does not fit the site."""
    if site is None:
        raise ValidationError({"document": [f"No site named {row.site!r} serves query tools."]})
    catalog = Catalog(site)
    if not catalog:
        raise ValidationError({"document": [f"The site {row.site!r} has no queryable model resources."]})
    engine = query_engine(site)
    try:
        plan = Parser(catalog, engine.max_rows, engine.default_limit).parse(row.document)
    except QueryError as error:
        raise ValidationError({"document": [str(error)]}) from None
    return plan.resource.model


class SavedQueryTool(Tool):
    """A saved model query (``McpQueryTool.document``) as a read-only tool of ``site``."""

    annotations = READ_ONLY
    output_schema = answer.OUTPUT_SCHEMA

    def __init__(self, row: Any, site: Any) -> None:
        model = row.model.model_class()
        if model is None:
            raise ValueError(f"Saved query {row.name!r}: its model no longer exists.")
        opts = model._meta
        self.row_pk, self.site, self.document = row.pk, site, dict(row.document)
        self.name = row.name
        self.title = row.title or None
        self.description = row.description or (
            f"A saved question about {opts.verbose_name_plural}: {json.dumps(self.document, ensure_ascii=False)}")
        self.permission_classes = [HasPermission(f"{opts.app_label}.view_{opts.model_name}")]
        engine = query_engine(site)
        self.input_schema = {"type": "object", "properties": {"limit": {
            "type": "integer", "minimum": 1, "maximum": engine.max_rows,
            "description": "At most this many rows (default: the saved query's)."}}, "additionalProperties": False}
        super().__init__()

    async def validated_arguments(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """``limit`` only, a whole number within the site's cap."""
        unknown = sorted(set(arguments) - {"limit"})
        limit = arguments.get("limit")
        if unknown:
            raise InvalidArguments(f"{', '.join(unknown)}: unknown argument; a saved query takes only limit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
            raise InvalidArguments("limit: a whole number, 1 or more")
        return {"limit": limit}

    async def call(self, ctx: Context, limit: int | None) -> dict[str, Any]:
        document = {**self.document, **({"limit": limit} if limit is not None else {})}
        return await query_engine(self.site).call(ctx, document)
