"""
What a comparison in a query may be: the lookups and transforms each kind of field takes, and the
conversion of a JSON value by the field it is compared with (``to_python``, as a form does).
"""

from __future__ import annotations

import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from .catalog import kind_of
from .errors import QueryError

TEXT_LOOKUPS = ("iexact", "contains", "icontains", "startswith", "istartswith", "endswith", "iendswith")
ORDER_LOOKUPS = ("gt", "gte", "lt", "lte", "range")
LOOKUPS = ("exact", *TEXT_LOOKUPS, *ORDER_LOOKUPS, "in", "isnull")
COUNT_LOOKUPS = ("exact", "gt", "gte", "lt", "lte", "range", "in")
DATE_TRANSFORMS = ("year", "iso_year", "quarter", "month", "week", "week_day", "iso_week_day", "day")
TIME_TRANSFORMS = ("hour", "minute")
MAX_IN_VALUES = 1000


def transforms_of(field: Any) -> tuple[str, ...]:
    if isinstance(field, models.DateTimeField):
        return (*DATE_TRANSFORMS, *TIME_TRANSFORMS, "date")
    if isinstance(field, models.DateField):
        return DATE_TRANSFORMS
    if isinstance(field, models.TimeField):
        return TIME_TRANSFORMS
    return ()


def lookups_of(field: Any) -> tuple[str, ...]:
    """The lookups a query may use on ``field``'s values."""
    kind = kind_of(field)
    if kind in ("json", "file") or isinstance(field, models.BinaryField):
        return ("isnull",)
    if kind == "boolean":
        return ("exact", "isnull")
    if kind == "key" or isinstance(field, models.UUIDField):
        return ("exact", "in", "isnull")
    if kind == "text":
        return LOOKUPS
    return ("exact", *ORDER_LOOKUPS, "in", "isnull")


def value_field(field: Any, transforms: tuple[str, ...]) -> Any:
    """The field whose ``to_python`` converts a value compared after ``transforms``."""
    if field.is_relation:
        while field.is_relation:
            field = field.target_field
        return field
    if not transforms:
        return field
    return models.DateField() if transforms[-1] == "date" else models.IntegerField()



def convert(field: Any, lookup: str, value: Any, where: str) -> Any:
    """``value`` converted for ``lookup`` on ``field``; a :class:`QueryError` naming ``where`` otherwise."""
    if lookup == "isnull":
        if not isinstance(value, bool):
            raise QueryError(f"{where}: true or false.")
        return value
    if lookup in TEXT_LOOKUPS:
        if not isinstance(value, str):
            raise QueryError(f"{where}: a string.")
        return value
    if lookup in ("in", "range"):
        if not isinstance(value, list) or (lookup == "range" and len(value) != 2) \
                or (lookup == "in" and not 0 < len(value) <= MAX_IN_VALUES):
            raise QueryError(f"{where}: " + ("a list of two values, [low, high]." if lookup == "range"
                                             else f"a list of 1 to {MAX_IN_VALUES} values."))
        return [scalar(field, item, where) for item in value]
    if value is None:
        if lookup == "exact":
            return None
        raise QueryError(f"{where}: null is only compared with exact (or use isnull).")
    return scalar(field, value, where)

def scalar(field: Any, value: Any, where: str) -> Any:
    if value is None or isinstance(value, (dict, list)):
        raise QueryError(f"{where}: a single {kind_of(field)} value is expected.")
    if isinstance(field, models.BooleanField) and not isinstance(value, bool):
        raise QueryError(f"{where}: true or false.")
    if isinstance(value, bool) and not isinstance(field, models.BooleanField):
        raise QueryError(f"{where}: a {kind_of(field)} value, not a boolean.")
    if kind_of(field) in ("integer", "number") and isinstance(value, str) and not value.strip():
        raise QueryError(f"{where}: a {kind_of(field)} value.")
    try:
        converted = field.to_python(value)
        if isinstance(field, (models.CharField, models.TextField)) and not isinstance(value, str):
            raise ValidationError("a string is expected")
    except (ValidationError, TypeError, ValueError, ArithmeticError) as error:
        detail = "; ".join(error.messages) if isinstance(error, ValidationError) else "not a valid value"
        raise QueryError(f"{where}: {detail}") from None
    if isinstance(converted, float) and converted != converted:
        raise QueryError(f"{where}: not a number.")
    if isinstance(converted, datetime.datetime) and settings.USE_TZ and timezone.is_naive(converted):
        converted = timezone.make_aware(converted)  # a naive time is the site's time zone, as in forms
    return converted

