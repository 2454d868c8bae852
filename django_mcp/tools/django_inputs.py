"""
Tool arguments and results the Django way: a DRF ``Serializer`` or a Django ``Form`` publishes
and validates a tool's arguments (``input_serializer`` / ``input_form``), a DRF serializer
publishes and writes its result (``output_serializer``). See :class:`~django_mcp.tools.Tool`
for the contract of the work method and ``docs/tools.md`` for examples.

Validation is the real ``is_valid()``; its errors become an ``isError`` result that names each
field, so the model can correct its call (MCP spec 2025-11-25, server/tools, "Error Handling").
``is_valid()`` and ``.data`` may query the database (related fields, unique validators), so they
run on a worker thread (:func:`~django_mcp.threads.in_thread`).
"""

from __future__ import annotations

import inspect
import json
import logging
from typing import Any

from django import forms
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ImproperlyConfigured
from rest_framework import fields as drf, serializers
from rest_framework.settings import api_settings
from rest_framework.utils.encoders import JSONEncoder

from ..context import Context
from ..primitives import Primitive
from ..protocol.context import RequestContext
from ..threads import in_thread
from .results import InvalidArguments, error_result
from .field_schemas import as_json, form_initial, form_schema, serializer_schema
from .http_requests import build_request


logger = logging.getLogger("django_mcp.tools")


# Error texts ----------------------------------------------------------------------------------------


def _where(prefix: str, key: Any) -> str:
    if key in (api_settings.NON_FIELD_ERRORS_KEY, forms.forms.NON_FIELD_ERRORS):
        return prefix
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else str(key)


def error_lines(errors: Any, prefix: str = "") -> list[str]:
    """
    ``serializer.errors`` (or a form's, or a DRF error response's data) as ``where: message``
    lines: nested serializers give ``writer.name``, list items ``tags[1]``, errors of the whole
    object no prefix.
    """
    if isinstance(errors, dict):
        return [line for key, value in errors.items() for line in error_lines(value, _where(prefix, key))]
    if isinstance(errors, (list, tuple)):
        if all(isinstance(item, str) for item in errors):
            text = " ".join(str(item) for item in errors)
            return [f"{prefix}: {text}" if prefix else text] if text else []
        # ListSerializer errors: one entry per item, empty for the valid ones.
        return [line for index, item in enumerate(errors) for line in error_lines(item, _where(prefix, index))]
    return [f"{prefix}: {errors}" if prefix else str(errors)]


def unknown_keys(expected: dict[str, Any], data: Any, prefix: str = "") -> list[str]:
    """
    Keys of ``data`` that are no argument, down nested serializers (DRF would drop them silently;
    telling the model is more use to it).
    """
    if not isinstance(data, dict):
        return []
    lines = []
    for key, value in data.items():
        field = expected.get(key)
        where = _where(prefix, key)
        if field is None:
            names = ", ".join(expected) or "none"
            lines.append(f"{where}: not an argument of this tool (arguments: {names})")
        elif isinstance(field, serializers.ListSerializer) and isinstance(value, list):
            nested = writable_fields(field.child)
            lines.extend(line for index, item in enumerate(value)
                         for line in unknown_keys(nested, item, _where(where, index)))
        elif isinstance(field, serializers.BaseSerializer):
            lines.extend(unknown_keys(writable_fields(field), value, where))
    return lines


def writable_fields(serializer: serializers.BaseSerializer) -> dict[str, drf.Field]:
    """The fields a client may send: not read-only, not hidden."""
    return {name: field for name, field in serializer.fields.items()
            if not field.read_only and not isinstance(field, drf.HiddenField)}


# Inputs ---------------------------------------------------------------------------------------------


def serializer_context(ctx: Context) -> dict[str, Any]:
    """
    The default ``context`` of a tool's serializers: ``request`` is a Django request whose
    ``user`` is the MCP request's (what ``CurrentUserDefault`` and hyperlinked fields read),
    ``mcp_context`` the tool's :class:`~django_mcp.Context`.
    """
    request = build_request(ctx, "POST", "/")
    request.user = ctx.user if ctx.user is not None else AnonymousUser()
    return {"request": request, "mcp_context": ctx, "view": None, "format": None}


class DjangoInput:
    """A serializer or form class that publishes (``schema``) and validates a tool's arguments."""

    #: The parameter of the work method that receives the bound, validated serializer or form.
    instance_parameter = ""

    def __init__(self, tool: Primitive, declared: Any) -> None:
        self.declared = declared
        # One unbound instance, for the fields: what the schema and the checks read.
        self.prototype = self.make_prototype(tool)
        self.schema = self.build_schema()
        self.expected = self.argument_fields()
        self.takes, self.takes_all, self.wants_instance = _check_work_method(tool, self.results(), self)

    def make_prototype(self, tool: Primitive) -> Any:
        raise NotImplementedError

    def build_schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def argument_fields(self) -> dict[str, Any]:
        """The fields a client may send, by argument name."""
        raise NotImplementedError

    def results(self) -> dict[str, bool]:
        """What validation hands over, by key: True when the key is always there."""
        raise NotImplementedError

    def bind(self, arguments: dict[str, Any], tool: Primitive, ctx: Context) -> Any:
        raise NotImplementedError

    def clean(self, bound: Any) -> tuple[bool, Any, Any]:
        """``(valid, data, errors)`` of a bound serializer or form."""
        raise NotImplementedError

    def check(self, arguments: dict[str, Any], tool: Primitive, ctx: Context) -> tuple[Any, bool, Any, Any]:
        # On a worker thread: validation may query the database, and so may the hooks that
        # build the serializer's context or the form's kwargs.
        bound = self.bind(arguments, tool, ctx)
        return (bound, *self.clean(bound))

    async def validate(self, arguments: dict[str, Any], tool: Primitive, ctx: RequestContext) -> dict[str, Any]:
        """The work method's keyword arguments, or :class:`InvalidArguments` naming each field."""
        problems = unknown_keys(self.expected, arguments)
        bound, valid, data, errors = await in_thread(self.check)(arguments, tool, Context(ctx))
        if not valid:
            problems.extend(error_lines(errors))
        if problems:
            raise InvalidArguments("; ".join(problems))
        kwargs = dict(data) if self.takes_all else {key: value for key, value in data.items() if key in self.takes}
        if self.wants_instance:
            kwargs[self.instance_parameter] = bound
        return kwargs


class SerializerInput(DjangoInput):
    """``input_serializer``: the work method receives ``serializer.validated_data`` as keyword arguments."""

    instance_parameter = "serializer"

    def make_prototype(self, tool: Primitive) -> Any:
        return self.declared(context={})

    def build_schema(self) -> dict[str, Any]:
        return serializer_schema(self.prototype)

    def argument_fields(self) -> dict[str, Any]:
        return writable_fields(self.prototype)

    def results(self) -> dict[str, bool]:
        found = {}
        for field in self.prototype.fields.values():
            if field.read_only or not field.source_attrs:
                continue  # source="*" fields spread their own keys: a work method needs **data for them
            always = field.required or field.default is not drf.empty
            found[field.source_attrs[0]] = found.get(field.source_attrs[0], False) or always
        return found

    def bind(self, arguments: dict[str, Any], tool: Primitive, ctx: Context) -> Any:
        return self.declared(data=arguments, context=tool.get_serializer_context(ctx))

    def clean(self, bound: Any) -> tuple[bool, Any, Any]:
        valid = bound.is_valid()
        return valid, bound.validated_data if valid else None, bound.errors


class FormInput(DjangoInput):
    """``input_form``: the work method receives ``form.cleaned_data`` as keyword arguments."""

    instance_parameter = "form"

    def make_prototype(self, tool: Primitive) -> Any:
        # get_form_kwargs(None): the kwargs a form needs to exist at all, for its fields.
        return self.declared(**tool.get_form_kwargs(None))

    def build_schema(self) -> dict[str, Any]:
        return form_schema(self.prototype)

    def argument_fields(self) -> dict[str, Any]:
        return {name: field for name, field in self.prototype.fields.items()
                if not field.disabled and not isinstance(field, forms.FileField)}

    def results(self) -> dict[str, bool]:
        # cleaned_data has every field that validated, empty values included.
        return {name: True for name in self.prototype.fields}

    def bind(self, arguments: dict[str, Any], tool: Primitive, ctx: Context) -> Any:
        data = dict(arguments)
        for name, field in self.expected.items():
            # The published default is the field's initial: fill it in, as a form shown unbound would.
            has_default, default = form_initial(field)
            if name not in data and has_default:
                data[name] = default
        return self.declared(data=data, **tool.get_form_kwargs(ctx))

    def clean(self, bound: Any) -> tuple[bool, Any, Any]:
        valid = bound.is_valid()
        errors = {key: [error["message"] for error in value] for key, value in bound.errors.get_json_data().items()}
        return valid, bound.cleaned_data if valid else None, errors


def _check_work_method(tool: Primitive, results: dict[str, bool], spec: DjangoInput) -> tuple[set[str], bool, bool]:
    """
    Refuse at registration a work method that validation could not call: a field it does not
    take, a parameter no field fills, or an optional field's parameter without a default.
    """
    fn = tool.callable.fn
    skip = tool.callable.context_param
    parameters = {name: p for name, p in inspect.signature(fn).parameters.items()
                  if name != skip and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    takes_all = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    wants_instance = spec.instance_parameter in parameters and spec.instance_parameter not in results
    where = f"Tool {tool.name!r} ({tool.origin()})"
    for name, parameter in parameters.items():
        if name == spec.instance_parameter and wants_instance:
            continue
        if name not in results and parameter.default is parameter.empty:
            raise ImproperlyConfigured(f"{where}: the parameter {name!r} of its work method is no field of "
                                       f"{spec.declared.__name__}.")
        if name in results and not results[name] and parameter.default is parameter.empty:
            raise ImproperlyConfigured(f"{where}: the field {name!r} is optional, so the parameter {name!r} "
                                       "needs a default.")
    if not takes_all:
        missing = sorted(set(results) - set(parameters))
        if missing:
            raise ImproperlyConfigured(f"{where}: its work method does not take {', '.join(map(repr, missing))}, "
                                       f"which {spec.declared.__name__} validates; add the parameters or **data.")
    return set(parameters), takes_all, wants_instance


def django_input(tool: Primitive) -> DjangoInput:
    """The input spec of a tool with ``input_serializer`` or ``input_form``."""
    if tool.input_serializer is not None and tool.input_form is not None:
        raise ImproperlyConfigured(f"Tool {tool.name!r}: set input_serializer or input_form, not both.")
    if tool.input_serializer is not None:
        declared = tool.input_serializer
        if not (isinstance(declared, type) and issubclass(declared, serializers.BaseSerializer)):
            raise ImproperlyConfigured(f"Tool {tool.name!r}: input_serializer must be a DRF serializer class, "
                                       f"not {declared!r}.")
        return SerializerInput(tool, declared)
    declared = tool.input_form
    if not (isinstance(declared, type) and issubclass(declared, forms.BaseForm)):
        raise ImproperlyConfigured(f"Tool {tool.name!r}: input_form must be a Django form class, not {declared!r}.")
    return FormInput(tool, declared)


# Output ---------------------------------------------------------------------------------------------


class SerializerOutput:
    """
    ``output_serializer``: a serializer class writes the returned object or model instance; an
    instance made with ``many=True`` writes a returned list or queryset as ``{"results": [...]}``
    (structured content is an object in every revision before 2026-07-28).
    """

    def __init__(self, tool: Primitive) -> None:
        declared = tool.output_serializer
        self.tool_name = tool.name
        if isinstance(declared, serializers.ListSerializer):
            child = declared.child
            self.serializer_class: type[serializers.BaseSerializer] = type(child)
            self.kwargs = {key: value for key, value in getattr(child, "_kwargs", {}).items()
                           if key not in ("instance", "data", "context", "many")}
            self.many = True
        elif isinstance(declared, type) and issubclass(declared, serializers.BaseSerializer):
            self.serializer_class, self.kwargs, self.many = declared, {}, False
        else:
            raise ImproperlyConfigured(f"Tool {tool.name!r}: output_serializer must be a DRF serializer class, or "
                                       f"one made with many=True; not {declared!r}.")
        item = serializer_schema(self.serializer_class(context={}, **self.kwargs), output=True)
        self.schema = {"type": "object", "properties": {"results": {"type": "array", "items": item}},
                       "required": ["results"]} if self.many else item

    def structured(self, value: Any, tool: Primitive, ctx: Context) -> dict[str, Any]:
        """``value`` as the serializer writes it, as plain JSON; on a worker thread (it may query)."""
        context = tool.get_serializer_context(ctx)
        data = self.serializer_class(value, many=self.many, context=context, **self.kwargs).data
        data = as_json(data, JSONEncoder)
        return {"results": data} if self.many else data

    async def result(self, value: Any, tool: Primitive, ctx: RequestContext) -> dict[str, Any]:
        """
        The ``CallToolResult``: with an output schema, a successful result always carries
        ``structuredContent`` and an error result never does (MCP spec 2025-06-18 and 2025-11-25,
        server/tools, "Output Schema"), so a value that cannot be written is an error.
        """
        if isinstance(value, dict) and "content" in value and "isError" in value:
            return value  # a CallToolResult the tool built itself
        if value is None:
            logger.error("Tool %s returned None, which its output serializer cannot write", self.tool_name)
            return error_result(f"Tool {self.tool_name} returned no result.")
        try:
            structured = await in_thread(self.structured)(value, tool, Context(ctx))
        except Exception:
            logger.exception("Tool %s: the output serializer could not write the result", self.tool_name)
            return error_result(f"Tool {self.tool_name} failed with an internal error.")
        if not isinstance(structured, dict):
            logger.error("Tool %s: the output serializer wrote %s, not an object", self.tool_name, type(structured))
            return error_result(f"Tool {self.tool_name} failed with an internal error.")
        text = json.dumps(structured, ensure_ascii=False)
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}


def django_output(tool: Primitive) -> SerializerOutput:
    """The output spec of a tool with ``output_serializer``."""
    return SerializerOutput(tool)


__all__ = ["DjangoInput", "FormInput", "SerializerInput", "SerializerOutput", "error_lines",
           "serializer_context", "unknown_keys", "writable_fields"]
