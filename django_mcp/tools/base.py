"""The :class:`Tool` options class: its schemas, its per-request definition, and how a call is run."""

import functools
import json
import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from pydantic import BaseModel, ValidationError

from .. import content
from ..context import Context
from ..exceptions import ToolError
from ..primitives import Primitive, definition_without_none
from ..protocol.context import RequestContext
from ..protocol.errors import McpError
from ..protocol.input import InputRequired
from .results import InvalidArguments, error_result
from .schemas import arguments_model, check_header_properties, output_spec, schema_for_arguments


logger = logging.getLogger("django_mcp.tools")


class Tool(Primitive):
    """
    A tool the client's model may call (MCP spec 2025-11-25, server/tools). Options are class
    attributes; ``call`` does the work and its parameters are the tool's arguments::

        class LendBook(Tool):
            annotations = {"destructiveHint": False}
            permission_classes = [HasPermission("library.change_book")]

            async def call(self, book_id: int, ctx: Context) -> str:
                "Lend a book."

    The name defaults to the class name in snake case (``lend_book``), the description to the
    docstring of ``call`` or of the class. ``inputSchema`` comes from the parameters' type hints,
    ``outputSchema`` and ``structuredContent`` from the return annotation. Set ``input_schema`` to
    publish a hand-written JSON Schema instead; ``call`` then gets the arguments unvalidated.
    The decorator ``@tool(**options)`` builds the same class from a function.

    Arguments and results the Django way (``django_inputs.py``)::

        class AddVolume(Tool):
            input_serializer = VolumeInSerializer    # or input_form = VolumeForm
            output_serializer = VolumeSerializer     # or VolumeSerializer(many=True)

            def call(self, title: str, pages: int = 100, serializer=None) -> Volume:
                return serializer.save()

    With ``input_serializer`` (a DRF serializer class) or ``input_form`` (a Django form class) the
    ``inputSchema`` comes from the fields, and the arguments are validated by ``is_valid()``; errors
    come back as an ``isError`` result naming each field. ``call`` then receives
    ``serializer.validated_data`` (or ``form.cleaned_data``) as keyword arguments, one per field (a
    field's ``source`` name); a parameter called ``serializer`` (or ``form``) gets the bound,
    validated instance. Every field must be a parameter (or take ``**data``), and optional fields'
    parameters need defaults: both are checked at registration. :meth:`get_serializer_context`
    and :meth:`get_form_kwargs` say how they are built.

    With ``output_serializer`` the ``outputSchema`` comes from the serializer, and the returned
    object, model instance (or, for ``many=True``, list or queryset, as ``{"results": [...]}``) is
    written by it into ``structuredContent`` and a JSON text block.
    """

    kind = "tool"
    work_method = "call"
    options = Primitive.options | {"annotations", "input_schema", "output_schema", "structured_output",
                                   "input_serializer", "input_form", "output_serializer"}

    #: Hints about what the tool does, listed as its ``annotations`` (MCP spec, server/tools):
    #: ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``, ``title``.
    annotations: dict[str, Any] | None = None
    #: The JSON Schema of the arguments, given as is; None: built from the signature (or the
    #: ``input_serializer`` or ``input_form``).
    input_schema: dict[str, Any] | None = None
    #: The JSON Schema of ``structuredContent``; None: built from the return annotation.
    output_schema: dict[str, Any] | None = None
    #: False publishes no ``outputSchema`` whatever the return annotation says.
    structured_output: bool | None = None
    #: A DRF serializer class that publishes and validates the arguments.
    input_serializer: Any = None
    #: A Django form class that publishes and validates the arguments.
    input_form: Any = None
    #: A DRF serializer class (or one made with ``many=True``) that publishes and writes the result.
    output_serializer: Any = None

    def __init__(self) -> None:
        super().__init__()
        work = self.callable.fn
        self.django_input = self.django_output = None
        if self.input_serializer is not None or self.input_form is not None:
            from .django_inputs import django_input  # imports DRF: only for the tools that use it
            self.django_input = django_input(self)
        if self.input_schema is not None or self.django_input is not None:
            self.arguments_model: type[BaseModel] | None = None
            if self.input_schema is None:
                self.input_schema = self.django_input.schema
        else:
            skip = {self.callable.context_param} if self.callable.context_param else set()
            self.arguments_model = arguments_model(work, skip, self.name)
            self.input_schema = schema_for_arguments(self.arguments_model)
        check_header_properties(self.name, self.input_schema)
        if self.output_serializer is not None:
            from .django_inputs import django_output
            self.django_output = django_output(self)
        use_hints = self.structured_output is not False and self.django_output is None
        self.output = output_spec(work) if use_hints else None
        if self.output_schema is None:
            spec = self.django_output or self.output
            self.output_schema = spec.schema if spec is not None else None

    # Per-request hooks ------------------------------------------------------------------------

    def get_annotations(self, ctx: Context) -> dict[str, Any] | None:
        return self.annotations

    def get_input_schema(self, ctx: Context) -> dict[str, Any]:
        return self.input_schema or {"type": "object"}

    def get_output_schema(self, ctx: Context) -> dict[str, Any] | None:
        return self.output_schema

    def get_serializer_context(self, ctx: Context) -> dict[str, Any]:
        """
        The ``context`` of ``input_serializer`` and ``output_serializer``: by default ``request``
        (a Django request whose ``user`` is the caller) and ``mcp_context``. Override to add to it;
        it is asked on a worker thread, so it may use the ORM.
        """
        from .django_inputs import serializer_context
        return serializer_context(ctx)

    def get_form_kwargs(self, ctx: Context | None) -> dict[str, Any]:
        """
        Keyword arguments of ``input_form`` besides ``data`` (``{"user": ctx.user}``…), asked on a
        worker thread. Also asked with ``ctx=None`` at registration, when the form is made once to
        read its fields.
        """
        return {}

    def get_definition_fields(self, ctx: Context) -> dict[str, Any]:
        """The ``Tool`` object of ``tools/list``."""
        return definition_without_none(name=self.name, inputSchema=self.get_input_schema(ctx),
                                       outputSchema=self.get_output_schema(ctx),
                                       annotations=self.get_annotations(ctx))

    # Running ----------------------------------------------------------------------------------

    async def run(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """
        Call the tool and build a ``CallToolResult``. Exceptions from the tool become ``isError``
        results the model can read (MCP spec 2025-11-25, server/tools, "Error Handling");
        ``McpError`` and input requests pass through.
        """
        try:
            kwargs = await self.validated_arguments(arguments, ctx)
        except ValidationError as exc:
            return error_result(f"Invalid arguments for tool {self.name}: {_validation_text(exc)}")
        except InvalidArguments as exc:
            return error_result(f"Invalid arguments for tool {self.name}: {exc}")
        try:
            value = await self.callable(kwargs, ctx)
        except (McpError, InputRequired):
            raise
        except Exception as exc:
            if is_meant_for_the_model(exc) or settings.DEBUG:
                logger.info("Tool %s failed: %r", self.name, exc)
                return error_result(error_text(exc))
            logger.exception("Tool %s failed unexpectedly", self.name)
            return error_result(f"Tool {self.name} failed with an internal error.")
        if self.django_output is not None:
            return await self.django_output.result(value, self, ctx)
        try:
            return self.result(value)
        except ValidationError as exc:
            # The tool broke its own return annotation: a server bug, shown as a tool error.
            logger.error("Tool %s returned a value that does not match its output schema: %s", self.name, exc)
            return error_result(f"Tool {self.name} returned an invalid result: {_validation_text(exc)}")

    async def validated_arguments(self, arguments: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """The work method's keyword arguments; raises ``ValidationError`` or :class:`InvalidArguments`."""
        if self.django_input is not None:
            return await self.django_input.validate(arguments, self, ctx)
        return self._validated(arguments)

    def _validated(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.arguments_model is None:
            return dict(arguments)
        model = self.arguments_model.model_validate(arguments)
        # Keep the validated Python objects (pydantic models, dates…), not their dumps.
        return {name: getattr(model, name) for name in field_names(self.arguments_model)}

    def result(self, value: Any) -> dict[str, Any]:
        """Turn the work method's return value into a ``CallToolResult`` dict."""
        if isinstance(value, dict) and "content" in value and "isError" in value:
            return value  # already a CallToolResult
        if self.output is not None and not _is_content_value(value):
            structured = self.output.structured(value)
            return {"content": [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}],
                    "structuredContent": structured, "isError": False}
        return {"content": to_content(value), "isError": False}


@functools.cache
def field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """A model's field names, read once: pydantic's ``model_fields`` is a descriptor call per read."""
    return tuple(model.model_fields)


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


def is_meant_for_the_model(exc: BaseException) -> bool:
    """
    Whether an exception's message may go to the client: a :class:`ToolError`, a validation error
    (Django's, pydantic's, DRF's), a refused permission, or a missing object.
    """
    from rest_framework.exceptions import APIException

    return isinstance(exc, (ToolError, DjangoValidationError, ValidationError, PermissionDenied, ObjectDoesNotExist,
                            APIException))


def error_text(exc: BaseException) -> str:
    if isinstance(exc, DjangoValidationError):
        return "; ".join(exc.messages)
    if isinstance(exc, ValidationError):
        return _validation_text(exc)
    return str(exc) or exc.__class__.__name__


def _validation_text(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
