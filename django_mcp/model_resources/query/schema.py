"""
The published shape of a query document: the tool's ``inputSchema`` (JSON Schema 2020-12, MCP
spec 2025-11-25, server/tools) and the description that teaches a model to write one, naming the
models it may query, their fields and relations.
"""

from __future__ import annotations

from typing import Any

from .catalog import Catalog
from .lookups import COUNT_LOOKUPS, DATE_TRANSFORMS, LOOKUPS
from .parser import FUNCTIONS

CONDITION = {
    "type": "object",
    "minProperties": 1,
    "description": "Django lookups, all of which must hold: {\"field__lookup\": value}, across relations with "
                   "__ (\"book__author__name__icontains\": \"le\"); or {\"and\": [...]}, {\"or\": [...]}, "
                   "{\"not\": {...}}. Lookups: " + ", ".join(LOOKUPS) + "; date parts: "
                   + ", ".join(DATE_TRANSFORMS) + ", hour, minute, date. On a to-many relation: "
                   "relation__isnull, relation__count__<" + "|".join(COUNT_LOOKUPS) + ">.",
}


def input_schema(catalog: Catalog, max_rows: int, default_limit: int) -> dict[str, Any]:
    """The JSON Schema of a query on ``catalog``'s models."""
    columns = {"type": "array", "items": {"type": "string"}}
    return {
        "type": "object",
        "properties": {
            "model": {"type": "string", "enum": sorted(catalog.resources),
                      "description": "The model to query; its rows are the answer's rows (or groups)."},
            "filter": {**CONDITION},
            "exclude": {**CONDITION, "description": "Rows meeting this condition are left out."},
            "fields": {**columns, "description": "Columns of each row (default: every exposed field); "
                                                 "follow to-one relations with __, e.g. \"author__name\"."},
            "group_by": {**columns, "description": "Columns that form the groups aggregates are computed for."},
            "aggregates": {
                "type": "object",
                "description": "Name → aggregate, computed per group (or over all rows without group_by).",
                "additionalProperties": {
                    "type": "object",
                    "properties": {"function": {"enum": list(FUNCTIONS)},
                                   "field": {"type": "string", "description": "A column; count without it "
                                                                               "counts rows."},
                                   "distinct": {"type": "boolean", "description": "count only"}},
                    "required": ["function"],
                    "additionalProperties": False,
                },
            },
            "having": {**CONDITION, "description": "A condition on the aggregates, e.g. {\"loans__gt\": 3}."},
            "order_by": {**columns, "description": "Answer columns, \"-\" before one for descending."},
            "distinct": {"type": "boolean", "description": "Leave out repeated rows of fields."},
            "limit": {"type": "integer", "minimum": 1, "maximum": max_rows,
                      "description": f"At most this many rows (default {default_limit})."},
        },
        "required": ["model"],
        "additionalProperties": False,
    }


def description(catalog: Catalog, max_rows: int) -> str:
    """What the tool does, how to write a query, and the models it may read."""
    models = "\n".join(catalog.describe(resource) for _, resource in sorted(catalog.resources.items()))
    return (
        "Answer questions from the data with a read-only query: choose a model, filter it with Django "
        "lookups (across relations with __), pick fields, or group and aggregate (count, sum, avg, min, "
        f"max). At most {max_rows} rows. You only ever see rows you may see.\n"
        "Example, orders per country since October, most first: {\"model\": \"order\", \"filter\": "
        "{\"placed__gte\": \"2026-10-01\"}, \"group_by\": [\"customer__country\"], \"aggregates\": "
        "{\"orders\": {\"function\": \"count\"}}, \"order_by\": [\"-orders\"]}\n"
        f"Models:\n{models}"
    )
