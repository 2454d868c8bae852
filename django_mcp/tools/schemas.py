"""JSON Schemas for tools, derived from type hints with pydantic."""

import inspect
import re
from collections.abc import Callable
from typing import Any, get_args, get_type_hints

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model

from ..content import CONTENT_TYPES


class ArgumentsModel(BaseModel):
    """Base of the per-tool model that validates ``arguments``; unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def arguments_model(fn: Callable[..., Any], skip: set[str], name: str | None = None) -> type[BaseModel]:
    """A pydantic model with one field per parameter of ``fn`` (except the injected ones)."""
    signature = inspect.signature(fn)
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        if name in skip or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(name, Any)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[name] = (annotation, default)
    return create_model(f"{name or fn.__name__}_arguments", __base__=ArgumentsModel, **fields)


def schema_for_arguments(model: type[BaseModel]) -> dict[str, Any]:
    """The tool's ``inputSchema``: an object schema, no pydantic titles at the root."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("properties", {})
    if not schema["properties"]:
        # Recommended shape for tools without arguments (2025-11-25, MCP spec 2026-07-28, server/tools).
        schema["additionalProperties"] = False
    return schema


def _mentions_content(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, CONTENT_TYPES):
        return True
    return any(_mentions_content(arg) for arg in get_args(annotation))


def _is_unstructured(annotation: Any) -> bool:
    """Return types that are content, not data: no structured output for them."""
    # A bare list says nothing about its items, often content blocks: no schema to promise.
    if annotation in (inspect.Signature.empty, None, type(None), str, Any, list, tuple):
        return True
    return _mentions_content(annotation)


class OutputSpec:
    """
    How a tool's return value becomes ``structuredContent`` (2025-06-18+). Object-shaped return
    types are used as they are; anything else is wrapped as ``{"result": value}`` so the schema is
    an object in every revision (structured output was object-only before 2026-07-28).
    """

    def __init__(self, annotation: Any) -> None:
        self.adapter = TypeAdapter(annotation)
        schema = self.adapter.json_schema()
        self.wrapped = schema.get("type") != "object"
        if self.wrapped:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
            if defs:
                schema["$defs"] = defs
        schema.pop("title", None)
        self.schema = schema

    def structured(self, value: Any) -> Any:
        """Validate ``value`` against the return type and dump it as JSON-ready data."""
        dumped = self.adapter.dump_python(self.adapter.validate_python(value), mode="json")
        return {"result": dumped} if self.wrapped else dumped


def output_spec(fn: Callable[..., Any]) -> OutputSpec | None:
    """The structured-output spec for ``fn``'s return annotation, or None for plain content."""
    try:
        annotation = get_type_hints(fn, include_extras=True).get("return", inspect.Signature.empty)
    except Exception:
        return None
    if _is_unstructured(annotation):
        return None
    return OutputSpec(annotation)


_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_HEADER_TYPES = {"string", "integer", "boolean"}


def check_header_properties(tool_name: str, schema: dict[str, Any]) -> None:
    """
    Refuse ``x-mcp-header`` markings that clients must reject (MCP spec 2026-07-28, basic/transports/streamable-http): the name must be an
    RFC 9110 token, unique case-insensitively, on a top-level string, integer or boolean property.
    Clients drop a tool that breaks these rules, so registration fails loudly instead.
    """
    seen: dict[str, str] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or "x-mcp-header" not in prop:
            continue
        header = prop["x-mcp-header"]
        if not isinstance(header, str) or not _TOKEN.match(header):
            raise ImproperlyConfigured(f"Tool {tool_name!r}: x-mcp-header of {name!r} must be a header name token")
        if prop.get("type") not in _HEADER_TYPES:
            raise ImproperlyConfigured(f"Tool {tool_name!r}: x-mcp-header is allowed only on string, integer or "
                                       f"boolean properties, not on {name!r}")
        if header.lower() in seen:
            raise ImproperlyConfigured(f"Tool {tool_name!r}: x-mcp-header {header!r} is used by both "
                                       f"{seen[header.lower()]!r} and {name!r}")
        seen[header.lower()] = name
