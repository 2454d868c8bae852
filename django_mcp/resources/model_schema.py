"""
What a published model looks like, for clients: the JSON type of each field as its serializer
writes it, and the description the schema resource of a model serves (fields, types, help texts,
choices and relations), so a client's model can learn the shape of the data before reading it.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any

from django.db import models


# Django's internal field types → (JSON Schema of the serialized value, the Python type of an
# argument that filters on it). Decimals, durations and UUIDs travel as strings to stay lossless.
_STRING = ({"type": "string"}, str)
_TYPES: dict[str, tuple[dict[str, Any], Any]] = {
    "AutoField": ({"type": "integer"}, int),
    "BigAutoField": ({"type": "integer"}, int),
    "SmallAutoField": ({"type": "integer"}, int),
    "IntegerField": ({"type": "integer"}, int),
    "BigIntegerField": ({"type": "integer"}, int),
    "SmallIntegerField": ({"type": "integer"}, int),
    "PositiveIntegerField": ({"type": "integer", "minimum": 0}, int),
    "PositiveBigIntegerField": ({"type": "integer", "minimum": 0}, int),
    "PositiveSmallIntegerField": ({"type": "integer", "minimum": 0}, int),
    "FloatField": ({"type": "number"}, float),
    "DecimalField": ({"type": "string", "format": "decimal"}, decimal.Decimal),
    "BooleanField": ({"type": "boolean"}, bool),
    "DateField": ({"type": "string", "format": "date"}, datetime.date),
    "DateTimeField": ({"type": "string", "format": "date-time"}, datetime.datetime),
    "TimeField": ({"type": "string", "format": "time"}, datetime.time),
    "DurationField": ({"type": "string", "format": "duration"}, datetime.timedelta),
    "UUIDField": ({"type": "string", "format": "uuid"}, uuid.UUID),
    "EmailField": ({"type": "string", "format": "email"}, str),
    "URLField": ({"type": "string", "format": "uri"}, str),
    "JSONField": ({}, Any),
}


def target_field(field: Any) -> Any:
    """For a foreign key, the field it points at (its value is the related row's key)."""
    while field.is_relation and (field.many_to_one or field.one_to_one) and hasattr(field, "target_field"):
        field = field.target_field
    return field


def json_schema(field: Any) -> dict[str, Any]:
    """The JSON Schema of one field's serialized value."""
    if isinstance(field, models.FileField):
        schema: dict[str, Any] = {"type": "string", "format": "uri"}
    elif field.is_relation:
        schema = {"type": "string", "format": "uri"}  # a link, or the related key when unpublished
    else:
        schema = dict(_TYPES.get(field.get_internal_type(), _STRING)[0])
    if field.choices and not field.is_relation:
        schema["enum"] = [value for value, _ in field.flatchoices]
    if getattr(field, "max_length", None) and schema.get("type") == "string" and "format" not in schema:
        schema["maxLength"] = field.max_length
    if field.null:
        schema = {"anyOf": [schema, {"type": "null"}]} if schema else {}
    return schema


def python_type(field: Any) -> Any:
    """The Python type of a filter argument on ``field``: the related key's type for relations."""
    return _TYPES.get(target_field(field).get_internal_type(), _STRING)[1]


def describe_model(resource: Any) -> dict[str, Any]:
    """The document of a model resource's (a ModelResource's) schema resource."""
    opts = resource.opts
    serializer = resource.get_serializer_class()()
    fields = []
    for name, serializer_field in serializer.fields.items():
        entry: dict[str, Any] = {"name": name}
        try:
            field = opts.get_field(serializer_field.source if serializer_field.source != "*" else name)
        except Exception:
            field = None
        if field is not None:
            entry["type"] = field.get_internal_type()
            entry["verboseName"] = str(getattr(field, "verbose_name", name))
            entry["schema"] = json_schema(field) if not field.many_to_many else {
                "type": "array", "items": {"type": "string", "format": "uri"}}
            if getattr(field, "help_text", ""):
                entry["helpText"] = str(field.help_text)
            if field.is_relation and field.related_model is not None:
                entry["relation"] = {"model": field.related_model._meta.label,
                                     "many": bool(field.many_to_many or field.one_to_many)}
                related = resource.related_uri_template(field.related_model)
                if related:
                    entry["relation"]["uriTemplate"] = related
                elif not field.many_to_many:
                    # An unpublished relation is its key, not a link.
                    entry["schema"] = json_schema(target_field(field))
            if field.choices and not field.is_relation:
                entry["choices"] = [{"value": value, "label": str(label)} for value, label in field.flatchoices]
            entry["nullable"] = bool(field.null)
        fields.append(entry)
    document: dict[str, Any] = {
        "model": opts.label,
        "verboseName": str(opts.verbose_name),
        "verboseNamePlural": str(opts.verbose_name_plural),
        "uriTemplate": resource.row_uri_template,
        "lookupField": resource.lookup_field,
        "ordering": resource.keyset.order_by,
        "fields": fields,
    }
    if resource.get_description():
        document["description"] = resource.get_description()
    if resource.search_fields:
        document["searchFields"] = list(resource.search_fields)
    return document
