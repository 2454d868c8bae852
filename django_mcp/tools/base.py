"""The :class:`Tool`: a registered callable with its schemas, and how a call is run."""

import json
import logging
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from .. import content
from ..primitives import Permission, Primitive
from ..protocol.context import RequestContext
from ..protocol.errors import McpError
from ..protocol.input import InputRequired
from .schemas import arguments_model, check_header_properties, output_spec, schema_for_arguments


logger = logging.getLogger("django_mcp.tools")


class Tool(Primitive):
    """
    A tool built from a function: name from ``__name__``, description from the docstring,
    ``inputSchema`` from the parameters' type hints, ``outputSchema`` from the return annotation.
    Pass ``input_schema`` to publish a hand-written JSON Schema instead; the function then gets
    the arguments as keyword arguments, unvalidated.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, title: str | None = None,
                 description: str | None = None, annotations: dict[str, Any] | None = None,
                 input_schema: dict[str, Any] | None = None, output_schema: dict[str, Any] | None = None,
                 structured_output: bool | None = None, icons: list[dict[str, Any]] | None = None,
                 meta: dict[str, Any] | None = None, permission: Permission = None) -> None:
        super().__init__(fn, name=name, title=title, description=description, icons=icons, meta=meta,
                         permission=permission)
        self.annotations = annotations
        skip = {self.callable.context_param} if self.callable.context_param else set()
        if input_schema is not None:
            self.arguments_model: type[BaseModel] | None = None
            self.input_schema = input_schema
        else:
            self.arguments_model = arguments_model(fn, skip)
            self.input_schema = schema_for_arguments(self.arguments_model)
        check_header_properties(self.name, self.input_schema)
        self.output = output_spec(fn) if structured_output is not False else None
        self.output_schema = output_schema or (self.output.schema if self.output else None)

    def definition(self) -> dict[str, Any]:
        """The ``Tool`` object of ``tools/list``."""
        return self.described({"name": self.name, "inputSchema": self.input_schema},
                              outputSchema=self.output_schema, annotations=self.annotations)

    async def run(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """
        Call the tool and build a ``CallToolResult``. Exceptions from the tool become ``isError``
        results the model can read (digest §4.1); ``McpError`` and input requests pass through.
        """
        try:
            kwargs = self._validated(arguments)
        except ValidationError as exc:
            return error_result(f"Invalid arguments for tool {self.name}: {_validation_text(exc)}")
        try:
            value = await self.callable(kwargs, ctx)
        except (McpError, InputRequired):
            raise
        except Exception as exc:
            logger.info("Tool %s failed: %r", self.name, exc)
            return error_result(str(exc) or exc.__class__.__name__)
        try:
            return self.result(value)
        except ValidationError as exc:
            # The tool broke its own return annotation: a server bug, shown as a tool error.
            logger.error("Tool %s returned a value that does not match its output schema: %s", self.name, exc)
            return error_result(f"Tool {self.name} returned an invalid result: {_validation_text(exc)}")

    def _validated(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.arguments_model is None:
            return dict(arguments)
        model = self.arguments_model.model_validate(arguments)
        # Keep the validated Python objects (pydantic models, dates…), not their dumps.
        return {name: getattr(model, name) for name in type(model).model_fields}

    def result(self, value: Any) -> dict[str, Any]:
        """Turn the function's return value into a ``CallToolResult`` dict."""
        if isinstance(value, dict) and "content" in value and "isError" in value:
            return value  # already a CallToolResult
        if self.output is not None and not _is_content_value(value):
            structured = self.output.structured(value)
            return {"content": [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}],
                    "structuredContent": structured, "isError": False}
        return {"content": to_content(value), "isError": False}


def to_content(value: Any) -> list[dict[str, Any]]:
    """Content blocks for an unstructured return value."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if content.is_content(value):
        return [content.dump(value)]
    if isinstance(value, (list, tuple)):
        blocks: list[dict[str, Any]] = []
        for item in value:
            blocks.extend(to_content(item))
        return blocks
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return [{"type": "text", "text": json.dumps(value, ensure_ascii=False, default=str)}]


def _is_content_value(value: Any) -> bool:
    """Content blocks (or a list of them) are content even under a broad ``-> list`` hint."""
    if content.is_content(value):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(content.is_content(item) for item in value)


def error_result(message: str) -> dict[str, Any]:
    """A tool-execution error the model can see and correct."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _validation_text(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
