"""
Prompt arguments as a Django :class:`~django.forms.Form`.

MCP sends every prompt argument as a string (MCP spec 2025-11-25, server/prompts, ``prompts/get``).
A form is what Django already uses to turn strings from outside into typed, validated values, so
a template prompt's arguments are one: declared by hand (``form_class``), built from a header
block's argument specs (:func:`form_from_specs`) or from a function's signature
(:func:`form_from_signature`). The same form gives the ``arguments`` of ``prompts/list``, the
errors of ``prompts/get`` and the suggestions of ``completion/complete``.
"""

from __future__ import annotations

import datetime
import decimal
import inspect
import uuid
from collections.abc import Callable
from typing import Any, get_type_hints

from django import forms
from django.apps import apps
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.module_loading import import_string

from ..threads import in_thread


class BooleanArgumentField(forms.NullBooleanField):
    """A yes/no argument: ``true``/``false``, ``yes``/``no``, ``on``/``off`` or ``1``/``0``."""

    def to_python(self, value: Any) -> bool | None:
        if isinstance(value, str):
            value = {"yes": True, "on": True, "no": False, "off": False}.get(value.strip().lower(), value)
        return super().to_python(value)


#: Header ``type:`` names and the form fields that convert them.
FIELD_TYPES: dict[str, Callable[..., forms.Field]] = {
    "str": forms.CharField,
    "int": forms.IntegerField,
    "float": forms.FloatField,
    "decimal": forms.DecimalField,
    "bool": BooleanArgumentField,
    "date": forms.DateField,
    "datetime": forms.DateTimeField,
    "time": forms.TimeField,
    "email": forms.EmailField,
    "url": forms.URLField,
    "slug": forms.SlugField,
    "uuid": forms.UUIDField,
}

#: Python annotations and the header type they mean, for prompts written as functions.
ANNOTATION_TYPES = {str: "str", int: "int", float: "float", decimal.Decimal: "decimal", bool: "bool",
                    datetime.date: "date", datetime.datetime: "datetime", datetime.time: "time", uuid.UUID: "uuid"}

#: Context names every prompt template gets; an argument may not hide them.
RESERVED_NAMES = frozenset({"user", "prompt"})


class ArgumentError(ValueError):
    """An argument spec is wrong (an unknown type, a default that does not convert…)."""


def make_field(spec: dict[str, Any]) -> forms.Field:
    """The form field for one argument spec (``name``, ``type``, ``choices``, ``required``…)."""
    name = spec["name"]
    type_name = spec.get("type") or "str"
    if type_name not in FIELD_TYPES:
        raise ArgumentError(f"argument {name!r}: unknown type {type_name!r}; known types: {', '.join(FIELD_TYPES)}")
    required = spec.get("required", "default" not in spec)
    options = {"required": required, "help_text": spec.get("description") or ""}
    if spec.get("title"):
        options["label"] = spec["title"]
    base = FIELD_TYPES[type_name](**options)
    if spec.get("choices"):
        choices = [str(choice) for choice in spec["choices"]]
        field: forms.Field = forms.TypedChoiceField(choices=[(c, c) for c in choices], coerce=base.clean,
                                                    empty_value=None if type_name != "str" else "", **options)
    else:
        field = base
    if "default" in spec:
        try:
            field.mcp_default = field.clean(spec["default"]) if isinstance(spec["default"], str) else spec["default"]
        except ValidationError as error:
            raise ArgumentError(f"argument {name!r}: default {spec['default']!r} is invalid: "
                                f"{' '.join(error.messages)}") from None
    if spec.get("complete"):
        field.mcp_complete = spec["complete"]
    return field


def check_names(names: list[str], where: str) -> None:
    clash = sorted(set(names) & RESERVED_NAMES)
    if clash:
        raise ArgumentError(f"{where}: {', '.join(clash)} cannot be an argument name; prompt templates already "
                            f"have {', '.join(sorted(RESERVED_NAMES))} in their context.")


def form_from_specs(specs: list[dict[str, Any]], name: str = "PromptArguments") -> type[forms.Form]:
    """A form class with one field per argument spec, in order."""
    check_names([spec["name"] for spec in specs], name)
    fields = {spec["name"]: make_field(spec) for spec in specs}
    return type(forms.Form)(name, (forms.Form,), fields)


def form_from_signature(fn: Callable[..., Any], skip: str | None, descriptions: dict[str, str] | None,
                        name: str = "PromptArguments") -> type[forms.Form]:
    """A form class from a function's parameters: annotations give types, defaults optionality."""
    try:
        hints = get_type_hints(fn)
    except Exception:
        hints = {}
    specs = []
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.name == skip or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        spec: dict[str, Any] = {"name": parameter.name, "type": ANNOTATION_TYPES.get(hints.get(parameter.name), "str")}
        if parameter.default is not inspect.Parameter.empty:
            spec["default"] = parameter.default
            spec["required"] = False
        if descriptions and parameter.name in descriptions:
            spec["description"] = descriptions[parameter.name]
        specs.append(spec)
    return form_from_specs(specs, name)


def argument_definitions(form_class: type[forms.Form]) -> list[dict[str, Any]]:
    """The ``PromptArgument`` objects of ``prompts/list`` (MCP spec 2025-11-25, server/prompts)."""
    definitions = []
    for name, field in form_class.base_fields.items():
        definition: dict[str, Any] = {"name": name}
        if field.label:
            definition["title"] = str(field.label)
        if field.help_text:
            definition["description"] = str(field.help_text)
        definition["required"] = bool(field.required)
        definitions.append(definition)
    return definitions


def clean_arguments(form_class: type[forms.Form], arguments: dict[str, str], prompt_name: str) -> dict[str, Any]:
    """
    The converted values, by argument name; what the client left out gets the argument's default.
    Raises ``ValueError`` with every field's errors in one readable message.
    """
    form = form_class(data={key: value for key, value in arguments.items() if key in form_class.base_fields})
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        raise ValueError(f"Invalid arguments for prompt {prompt_name}: {problems}")
    values = dict(form.cleaned_data)
    for name, field in form.fields.items():
        if name not in arguments and hasattr(field, "mcp_default"):
            values[name] = field.mcp_default
    return values


# Completion ---------------------------------------------------------------------------------------

async def field_completions(field: forms.Field, value: str, context: dict[str, str]) -> list[str] | None:
    """
    Suggestions a field gives by itself: its ``complete`` (a dotted path to a function, or
    ``app_label.Model.field``), a queryset's values, or its choices; None when it has none.
    """
    complete = getattr(field, "mcp_complete", None)
    if complete:
        return await completer_completions(resolve_completer(complete), value, context)
    queryset = getattr(field, "queryset", None)
    if isinstance(queryset, QuerySet):
        return await queryset_completions(queryset, value, getattr(field, "to_field_name", None) or "pk")
    choices = getattr(field, "choices", None)
    if choices is not None:
        return [str(key) for key, _ in choices if str(key) and str(key).startswith(value)]
    return None


async def completer_completions(completer: Any, value: str, context: dict[str, str]) -> list[str]:
    """Suggestions from a completer: a list, a function (sync or async) or a queryset."""
    from ..completions import run_completer

    if isinstance(completer, QuerySet):
        # A values_list("field", flat=True) completes that field; any other queryset its keys.
        fields = getattr(completer, "_fields", None) or ("pk",)
        return await queryset_completions(completer, value, fields[0])
    return await run_completer(completer, value, context)


async def queryset_completions(queryset: QuerySet, value: str, field: str, limit: int = 101) -> list[str]:
    """Values of ``field`` that start with ``value``, first ``limit`` of them, from the database."""
    def query() -> list[str]:
        rows = queryset.filter(**{f"{field}__istartswith": value}) if value else queryset
        return [str(v) for v in rows.order_by(field).values_list(field, flat=True).distinct()[:limit]]

    return await in_thread(query)()


def resolve_completer(path: str) -> Any:
    """``app_label.Model.field`` as a queryset of that field, or a dotted path to a function."""
    parts = path.split(".")
    if len(parts) == 3:
        try:
            model = apps.get_model(parts[0], parts[1])
        except (LookupError, ValueError):
            model = None
        if model is not None:
            return model._default_manager.values_list(parts[2], flat=True)
    try:
        return import_string(path)
    except ImportError as error:
        raise ArgumentError(f"complete: {path!r} is neither app_label.Model.field nor an importable function "
                            f"({error})") from None
