"""
A query's answer as a tool result: the rows as structured content, JSON-safe (dates in ISO 8601,
decimals and UUIDs as strings, as ``DjangoJSONEncoder`` writes them), cut to the size cap, and a
compact text table of the same rows for clients and models that read text.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

#: Widest a text table's cell is drawn; the structured rows keep the whole value.
CELL_WIDTH = 60

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "model": {"type": "string", "description": "The model queried."},
        "columns": {"type": "array", "items": {"type": "string"}, "description": "The columns of each row."},
        "rows": {"type": "array", "items": {"type": "object"}},
        "more": {"type": "boolean", "description": "More rows match than the limit let through."},
        "truncated": {"type": "boolean", "description": "Rows were left out to keep the answer under the size cap."},
    },
    "required": ["model", "columns", "rows", "more", "truncated"],
}


def json_safe(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return json.loads(json.dumps(rows, cls=DjangoJSONEncoder, ensure_ascii=False))


def fit(rows: list[dict[str, Any]], max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
    """The leading rows whose JSON stays under ``max_bytes``, and whether any were left out."""
    size = 2
    for index, row in enumerate(rows):
        size += len(json.dumps(row, ensure_ascii=False).encode()) + 1
        if size > max_bytes:
            return rows[:index], True
    return rows, False


def cell(value: Any) -> str:
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ").replace("|", "\\|")
    return text if len(text) <= CELL_WIDTH else text[:CELL_WIDTH - 1] + "…"


def text_table(model: str, columns: list[str], rows: list[dict[str, Any]], more: bool, truncated: bool) -> str:
    """The rows as a Markdown table, with a line saying how many and whether more match."""
    if not rows:
        return f"No {model} rows match."
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(row.get(name)) for name in columns) + " |" for row in rows]
    footer = f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
    if more:
        footer += "; more match: raise \"limit\", filter further, or aggregate"
    if truncated:
        footer += "; rows left out to keep the answer small: select fewer columns or rows"
    return "\n".join(lines) + f"\n\n{footer}."


def result(model: str, columns: list[str], rows: list[dict[str, Any]], more: bool,
           max_bytes: int) -> dict[str, Any]:
    """The ``CallToolResult``: a text table and the structured rows (MCP spec 2025-11-25, server/tools)."""
    rows, truncated = fit(json_safe(rows), max_bytes)
    structured = {"model": model, "columns": columns, "rows": rows, "more": more, "truncated": truncated}
    return {"content": [{"type": "text", "text": text_table(model, columns, rows, more, truncated)}],
            "structuredContent": structured, "isError": False}
