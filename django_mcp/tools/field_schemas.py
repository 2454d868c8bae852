"""
JSON Schemas of the fields of DRF serializers and Django forms, for the ``inputSchema`` and
``outputSchema`` of tools (MCP spec 2025-11-25, server/tools: both are JSON Schema objects).

An input schema describes what ``is_valid()`` accepts; an output schema what ``.data`` writes.
The two differ for a few types:

- Decimals are strings on input (``"format": "decimal"`` and a ``pattern`` bounding the decimal
  places), so no precision is lost on the way in; DRF also accepts numbers there. On output they
  follow the field: strings unless ``coerce_to_string=False``, as DRF writes them.
- Read-only fields (``id``, ``SerializerMethodField``…) exist only on output, write-only and hidden
  fields only on input; file fields are left out of inputs, as JSON arguments cannot carry uploads.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import RegexValidator
from rest_framework import fields as drf, relations, serializers
from rest_framework.settings import api_settings
from rest_framework.utils.encoders import JSONEncoder

from ..resources.model_schema import json_schema as model_field_schema, target_field


NULL = {"type": "null"}


def as_json(value: Any, encoder: type[json.JSONEncoder] = DjangoJSONEncoder) -> Any:
    """``value`` as plain JSON data (dates, decimals, UUIDs, lazy strings…); raises TypeError if it cannot be."""
    return json.loads(json.dumps(value, cls=encoder))


def _json_or_none(value: Any) -> Any:
    try:
        return as_json(value)
    except (TypeError, ValueError):
        return None


def _pattern(field: Any) -> str | None:
    """The regular expression of a RegexValidator, when JSON Schema (ECMA-262) can read it as well."""
    for validator in field.validators:
        if isinstance(validator, RegexValidator) and not validator.inverse_match:
            regex = validator.regex
            if regex.flags & ~re.UNICODE:
                return None  # flags (IGNORECASE…) have no place in a JSON Schema pattern
            return regex.pattern.replace(r"\A", "^").replace(r"\Z", "$")
    return None


def _decimal_input(decimal_places: int | None) -> dict[str, Any]:
    """A decimal argument: a string of digits with at most ``decimal_places`` after the point."""
    if decimal_places is None:
        fraction = r"(\.\d+)?"
    elif decimal_places == 0:
        fraction = ""
    else:
        fraction = rf"(\.\d{{1,{decimal_places}}})?"
    return {"type": "string", "format": "decimal", "pattern": rf"^-?\d+{fraction}$"}


def _bounds(schema: dict[str, Any], field: Any, low: str = "minimum", high: str = "maximum") -> dict[str, Any]:
    for attribute, key in (("min_value", low), ("max_value", high)):
        value = getattr(field, attribute, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            schema[key] = value
    return schema


def _lengths(schema: dict[str, Any], field: Any, low: str, high: str) -> dict[str, Any]:
    if getattr(field, "min_length", None) is not None:
        schema[low] = field.min_length
    if getattr(field, "max_length", None) is not None:
        schema[high] = field.max_length
    return schema


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


def _enum(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    """``enum`` of the choice values, with their ``type`` when they share one."""
    values = [_json_or_none(value) for value, _ in pairs]
    types = {next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), None) for value in values}
    return {"type": types.pop(), "enum": values} if len(types) == 1 and None not in types else {"enum": values}


def _labels(pairs: list[tuple[Any, Any]]) -> str | None:
    """The choices' labels, for the description, when they say more than the values."""
    labelled = [f"{value} ({label})" for value, label in pairs if str(label) != str(value)]
    return "; ".join(labelled) or None


def _flat_choices(choices: Any) -> list[tuple[Any, Any]]:
    """A form field's choices without groups and without the blank entry."""
    pairs = []
    for value, label in choices:
        if isinstance(label, (list, tuple)):
            pairs.extend(_flat_choices(label))
        elif value not in ("", None):
            pairs.append((value, label))
    return pairs


def key_schema(model: Any, field_name: str | None = None) -> dict[str, Any]:
    """The JSON Schema of the value that picks a row of ``model``: its primary key or ``field_name``."""
    field = model._meta.get_field(field_name) if field_name else model._meta.pk
    schema = model_field_schema(target_field(field))
    return schema.get("anyOf", [schema])[0] if "anyOf" in schema else schema


def _annotate(schema: dict[str, Any], *, label: Any, help_text: Any, nullable: bool, labels: str | None = None,
              default: Any = None, has_default: bool = False) -> dict[str, Any]:
    if nullable:
        schema = {"anyOf": [schema, NULL]}
    if label:
        schema["title"] = str(label)
    description = " ".join(part for part in (str(help_text) if help_text else "",
                                             f"Choices: {labels}." if labels else "") if part)
    if description:
        schema["description"] = description
    if has_default:
        schema["default"] = default
    return schema


# DRF serializers ------------------------------------------------------------------------------------


def serializer_schema(serializer: serializers.BaseSerializer, *, output: bool = False,
                      partial: bool = False) -> dict[str, Any]:
    """
    The object schema of a serializer instance: its writable fields for input (none required when
    ``partial``, as for PATCH), its readable fields for output.
    """
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in serializer.fields.items():
        if output and field.write_only:
            continue
        if not output and (field.read_only or isinstance(field, drf.HiddenField)):
            continue
        schema = drf_field_schema(field, output=output, partial=partial)
        if schema is None:
            continue
        properties[name] = schema
        # On output DRF writes every readable field except one whose attribute is missing, which it
        # skips unless the field is required or has a default.
        present = (field.required or field.default is not drf.empty) if output else field.required and not partial
        if present:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not output:
        # Unknown arguments are refused (django_inputs.unknown_keys), as the hinted tools refuse them.
        schema["additionalProperties"] = False
    return schema


def drf_field_schema(field: drf.Field, *, output: bool = False, partial: bool = False) -> dict[str, Any] | None:
    """The schema of one serializer field, or None when it has no place in an input (files)."""
    schema = _drf_type(field, output, partial)
    if schema is None:
        return None
    auto_label = (field.field_name or "").replace("_", " ").capitalize()
    label = field.label if field.label and field.label != auto_label else None
    has_default = False
    default = None
    if not output and field.default is not drf.empty and not callable(field.default):
        try:
            default = as_json(field.to_representation(field.default), JSONEncoder)
            has_default = True
        except Exception:
            has_default = False  # a default DRF cannot write is not worth publishing
    labels = _labels(list(field.choices.items())) if isinstance(field, drf.ChoiceField) else None
    return _annotate(schema, label=label, help_text=field.help_text, nullable=field.allow_null, labels=labels,
                     default=default, has_default=has_default)


def _drf_type(field: Any, output: bool, partial: bool) -> dict[str, Any] | None:
    if isinstance(field, serializers.ListSerializer):
        schema = {"type": "array", "items": serializer_schema(field.child, output=output, partial=partial)}
        if not field.allow_empty:
            schema["minItems"] = 1
        return _lengths(schema, field, "minItems", "maxItems")
    if isinstance(field, serializers.BaseSerializer):
        return serializer_schema(field, output=output, partial=partial)
    if isinstance(field, relations.ManyRelatedField):
        items = _drf_type(field.child_relation, output, partial) or {}
        schema = {"type": "array", "items": items}
        if not field.allow_empty:
            schema["minItems"] = 1
        return schema
    if isinstance(field, relations.PrimaryKeyRelatedField):
        if field.pk_field is not None:
            return _drf_type(field.pk_field, output, partial)
        queryset = field.queryset
        return key_schema(queryset.model) if queryset is not None else {"type": ["integer", "string"]}
    if isinstance(field, relations.HyperlinkedRelatedField):
        return {"type": "string", "format": "uri"}
    if isinstance(field, relations.RelatedField):  # SlugRelatedField, StringRelatedField…
        return {"type": "string"}
    if isinstance(field, drf.MultipleChoiceField):
        schema = {"type": "array", "items": _enum(list(field.choices.items())), "uniqueItems": True}
        if not field.allow_empty:
            schema["minItems"] = 1
        return schema
    if isinstance(field, drf.ChoiceField):
        schema = _enum(list(field.choices.items()))
        if field.allow_blank and "" not in schema["enum"]:
            schema["enum"].append("")
            if schema.get("type") != "string":
                schema.pop("type", None)
        return schema
    if isinstance(field, drf.BooleanField):
        return {"type": "boolean"}
    if isinstance(field, drf.FileField):
        return {"type": "string", "format": "uri"} if output else None
    if isinstance(field, drf.CharField):
        return _drf_string(field, output)
    if isinstance(field, drf.UUIDField):
        if output and field.uuid_format == "int":
            return {"type": "integer"}
        return {"type": "string", "format": "uuid"} if not output or field.uuid_format == "hex_verbose" else {
            "type": "string"}
    if isinstance(field, drf.DecimalField):
        if output:
            coerce = getattr(field, "coerce_to_string", api_settings.COERCE_DECIMAL_TO_STRING)
            return {"type": "string", "format": "decimal"} if coerce else {"type": "number"}
        return _decimal_input(field.decimal_places)
    if isinstance(field, drf.BigIntegerField) and output and getattr(
            field, "coerce_to_string", api_settings.COERCE_BIGINT_TO_STRING):
        return {"type": "string"}
    if isinstance(field, drf.IntegerField):
        return _bounds({"type": "integer"}, field)
    if isinstance(field, drf.FloatField):
        return _bounds({"type": "number"}, field)
    temporal = _drf_temporal(field, output)
    if temporal is not None:
        return temporal
    if isinstance(field, drf.ListField):
        schema = {"type": "array", "items": _drf_item(field.child, output, partial)}
        if not field.allow_empty:
            schema["minItems"] = 1
        return _lengths(schema, field, "minItems", "maxItems")
    if isinstance(field, drf.DictField):
        return {"type": "object", "additionalProperties": _drf_item(field.child, output, partial)}
    return {}  # JSONField, ReadOnlyField, SerializerMethodField, ModelField…: any JSON value


def _drf_item(child: Any, output: bool, partial: bool) -> dict[str, Any]:
    """The schema of a ListField's or DictField's child (an unvalidated child takes anything)."""
    if child is None or type(child).__name__ == "_UnvalidatedField":
        return {}
    return drf_field_schema(child, output=output, partial=partial) or {}


def _drf_string(field: Any, output: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if isinstance(field, drf.EmailField):
        schema["format"] = "email"
    elif isinstance(field, drf.URLField):
        schema["format"] = "uri"
    elif isinstance(field, drf.IPAddressField) and field.protocol in ("ipv4", "ipv6"):
        schema["format"] = field.protocol
    elif not output:
        pattern = _pattern(field)  # SlugField, RegexField, validators of model fields
        if pattern:
            schema["pattern"] = pattern
    if output:
        return schema
    _lengths(schema, field, "minLength", "maxLength")
    if not field.allow_blank and "minLength" not in schema:
        schema["minLength"] = 1  # DRF refuses "" unless allow_blank
    return schema


_ISO = ("iso-8601", None)


def _drf_temporal(field: Any, output: bool) -> dict[str, Any] | None:
    """Dates, times and durations: ISO 8601 strings, unless an output format says otherwise."""
    for kind, setting, fmt in ((drf.DateTimeField, "DATETIME_FORMAT", "date-time"),
                               (drf.DateField, "DATE_FORMAT", "date"), (drf.TimeField, "TIME_FORMAT", "time")):
        if isinstance(field, kind):
            written = getattr(field, "format", getattr(api_settings, setting))
            if output and written not in _ISO:
                return {"type": "string"}
            return {"type": "string", "format": fmt}
    if isinstance(field, drf.DurationField):
        written = getattr(field, "format", getattr(api_settings, "DURATION_FORMAT", "django"))
        # On input DRF reads both its own "[DD] [HH:[MM:]]ss" and ISO 8601 durations.
        return {"type": "string", "format": "duration"} if not output or written == "iso-8601" else {
            "type": "string"}
    return None


# Django forms ---------------------------------------------------------------------------------------


def form_schema(form: forms.BaseForm) -> dict[str, Any]:
    """The object schema of a form's fields (disabled and file fields left out)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in form.fields.items():
        if field.disabled or isinstance(field, forms.FileField):
            continue
        properties[name] = form_field_schema(field)
        if field.required and not form_initial(field)[0]:  # an initial value is filled in when absent
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def form_initial(field: forms.Field) -> tuple[bool, Any]:
    """``(True, value)`` when the field has a fixed ``initial`` that JSON can carry."""
    if field.initial is None or callable(field.initial):
        return False, None
    try:
        return True, as_json(field.initial)
    except (TypeError, ValueError):
        return False, None


def form_field_schema(field: forms.Field) -> dict[str, Any]:
    """The schema of one form field; ``initial`` is its default (django_inputs fills it in)."""
    has_default, default = form_initial(field)
    choices = isinstance(field, forms.ChoiceField) and not isinstance(field, forms.ModelChoiceField)
    return _annotate(_form_type(field), label=field.label, help_text=field.help_text,
                     nullable=isinstance(field, forms.NullBooleanField),
                     labels=_labels(_flat_choices(field.choices)) if choices else None,
                     default=default, has_default=has_default)


def _form_type(field: Any) -> dict[str, Any]:
    if isinstance(field, forms.ModelMultipleChoiceField):
        return {"type": "array", "items": key_schema(field.queryset.model, field.to_field_name), "uniqueItems": True}
    if isinstance(field, forms.ModelChoiceField):
        return key_schema(field.queryset.model, field.to_field_name)
    if isinstance(field, forms.MultipleChoiceField):
        return {"type": "array", "items": _enum(_flat_choices(field.choices)), "uniqueItems": True}
    if isinstance(field, forms.ChoiceField):
        return _enum(_flat_choices(field.choices))
    if isinstance(field, forms.NullBooleanField):
        return {"type": "boolean"}
    if isinstance(field, forms.BooleanField):
        # A required form checkbox must be ticked: only true is valid.
        return {"type": "boolean", "const": True} if field.required else {"type": "boolean"}
    if isinstance(field, forms.DecimalField):
        return _decimal_input(field.decimal_places)
    if isinstance(field, forms.FloatField):
        return _bounds({"type": "number"}, field)
    if isinstance(field, forms.IntegerField):
        return _bounds({"type": "integer"}, field)
    for kind, fmt in ((forms.DateTimeField, "date-time"), (forms.DateField, "date"), (forms.TimeField, "time"),
                      (forms.DurationField, "duration"), (forms.UUIDField, "uuid"), (forms.EmailField, "email"),
                      (forms.URLField, "uri")):
        if isinstance(field, kind):
            return {"type": "string", "format": fmt}
    if isinstance(field, forms.JSONField):
        return {}
    if isinstance(field, forms.CharField):
        schema = _lengths({"type": "string"}, field, "minLength", "maxLength")
        pattern = _pattern(field)
        if pattern:
            schema["pattern"] = pattern
        return schema
    return {"type": "string"}  # form data is text: other fields parse a string


__all__ = ["as_json", "drf_field_schema", "form_field_schema", "form_schema", "key_schema", "serializer_schema"]
