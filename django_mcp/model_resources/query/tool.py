"""
:class:`ModelQueryTool`: one read-only tool that answers ad-hoc questions across the models a
site publishes with ``queryable = True``, for the user who asks (MCP spec 2025-11-25,
server/tools). Off until a project adds it::

    from django_mcp import register
    from django_mcp.model_resources import ModelQueryTool

    @register()
    class QueryLibrary(ModelQueryTool):
        database = "replica"   # a read replica; default: the router's database for reading
        timeout_ms = 2000

A call is checked (``parser.py``), every model it touches must be one the user may list, and the
rows come from each resource's ``get_queryset(ctx)`` through every relation (``compiler.py``),
read-only under a timeout (``guard.py``). What goes wrong is a tool error the model can act on.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, router

from ...context import Context
from ...permissions import BasePermission
from ...protocol.context import RequestContext
from ...threads import in_thread
from ...tools.base import Tool
from . import answer, schema
from .catalog import Catalog
from .compiler import Compiler, holds
from .errors import QueryError
from .guard import estimated_cost, guarded, refusal
from .parser import Parser
from .plan import QueryPlan

logger = logging.getLogger("django_mcp.tools")

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def as_read(ctx: Context) -> Context:
    """
    The request asked as a ``resources/read``: a query reveals rows as reading them does, so whether
    a user may query a model is whether they may read its rows (not whether they may call a tool).
    """
    return Context(dataclasses.replace(ctx.request, method="resources/read", decisions={}, found={}, handle=None))


class MayQueryAModel(BasePermission):
    """Lists and allows the query tool for a user who may read the rows of at least one queryable model."""

    async def has_permission(self, ctx: Context, primitive: Any) -> bool:
        reading = as_read(ctx)
        for resource in primitive.catalog().resources.values():
            if await resource.permits(reading):
                return True
        return False


class ModelQueryTool(Tool):
    """
    A read-only query tool over the site's queryable model resources. Set options as class
    attributes of a subclass or as keywords: ``ModelQueryTool(timeout_ms=2000)``.

    ``site`` is the site whose model resources it queries; None (the default) means the site it is
    registered on. Options are checked when it is made: ``ImproperlyConfigured`` for a bad one.
    """

    name = "query_models"
    title = "Query the data"
    annotations = READ_ONLY
    permission_classes = [MayQueryAModel]
    input_schema = {"type": "object"}  # per site, from its queryable models: get_input_schema()
    output_schema = answer.OUTPUT_SCHEMA

    #: The database alias queries read from (a read replica); None: ``router.db_for_read(model)``.
    database: str | None = None
    #: The most rows a query may ask for with ``limit``.
    max_rows: int = 100
    #: Rows returned when a query sets no ``limit``.
    default_limit: int = 50
    #: The statement timeout: a query running longer is stopped and refused.
    timeout_ms: int = 3000
    #: The most bytes of JSON rows an answer carries; rows past it are left out (``truncated``).
    max_result_bytes: int = 100_000
    #: Refuse a query PostgreSQL's ``EXPLAIN`` estimates above this cost; None: never estimate.
    max_cost: float | None = None

    #: The call log's "Save as a query tool" button appears on this tool's calls (the query tools app).
    savable_as_query_tool = True

    tunables = ("database", "max_rows", "default_limit", "timeout_ms", "max_result_bytes", "max_cost")

    def __init__(self, site: Any = None, **options: Any) -> None:
        unknown = sorted(set(options) - {*self.tunables, "name", "title", "description"})
        if unknown:
            raise ImproperlyConfigured(f"{type(self).__qualname__}: unknown options {', '.join(unknown)}.")
        for key, value in options.items():
            setattr(self, key, value)
        for key in ("max_rows", "default_limit", "timeout_ms", "max_result_bytes"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ImproperlyConfigured(f"{type(self).__qualname__}: {key} must be a positive whole number.")
        self._site = site
        written = self.description  # given: kept; else made per site by get_description()
        super().__init__()
        self.description = written

    @property
    def site(self) -> Any:
        """The site queried: the one given, else the one this tool is registered on."""
        if self._site is None:
            from ...sites import all_sites

            for site in all_sites():
                if site.get_registered(self.kind, self.key) is self:
                    self._site = site
                    break
            else:
                raise ImproperlyConfigured(f"{type(self).__qualname__} is not registered on any site.")
        return self._site

    def catalog(self) -> Catalog:
        return Catalog(self.site)

    # What tools/list shows ----------------------------------------------------------------------

    def get_description(self, ctx: Context) -> str | None:
        return self.description or schema.description(self.catalog(), self.max_rows)

    def get_input_schema(self, ctx: Context) -> dict[str, Any]:
        return schema.input_schema(self.catalog(), self.max_rows, min(self.default_limit, self.max_rows))

    # A call -------------------------------------------------------------------------------------

    async def validated_arguments(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """The whole document as one argument: the parser checks it, and its errors name what to change."""
        return {"document": arguments}

    async def call(self, ctx: Context, document: dict[str, Any]) -> dict[str, Any]:
        catalog = self.catalog()
        plan = Parser(catalog, self.max_rows, self.default_limit).parse(document)
        reading = as_read(ctx)
        for resource in sorted(plan.touched, key=lambda r: r.get_name()):
            if not await resource.permits(reading):
                raise QueryError(f"You may not read {resource.get_name()} rows, so this query cannot use them.")
        return await in_thread(self.answer)(plan, ctx)

    def using(self, plan: QueryPlan) -> str:
        return self.database or router.db_for_read(plan.resource.model)

    def answer(self, plan: QueryPlan, ctx: Context) -> dict[str, Any]:
        """Run the plan (on a worker thread) and build the result."""
        using = self.using(plan)
        compiler = Compiler(ctx, using)
        model_name = plan.resource.get_name()
        try:
            with guarded(using, self.timeout_ms):
                queryset, names, expressions = compiler.queryset(plan)
                if self.max_cost is not None:
                    self.check_cost(queryset if queryset is not None else compiler.rows(plan))
                if queryset is None:
                    totals = compiler.rows(plan).aggregate(**expressions)
                    found = [totals] if plan.having is None or holds(plan.having, {
                        names[key]: value for key, value in totals.items()}) else []
                else:
                    found = list(queryset)
        except DatabaseError as error:
            raise refusal(error, using, self.timeout_ms, model_name) from None
        more = len(found) > plan.limit
        rows = [{names[key]: value for key, value in row.items() if key in names} for row in found[:plan.limit]]
        return answer.result(model_name, plan.answer_columns, rows, more, self.max_result_bytes)

    def check_cost(self, queryset: Any) -> None:
        cost = estimated_cost(queryset)
        if cost is not None and self.max_cost is not None and cost > self.max_cost:
            raise QueryError(f"The database estimates this query at cost {cost:.0f}, above this server's limit "
                             f"of {self.max_cost:.0f}. Narrow it: filter on indexed fields, or aggregate fewer rows.")
