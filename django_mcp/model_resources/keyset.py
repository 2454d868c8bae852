"""
Keyset ("seek") pagination over a queryset: a page starts *after* the last row of the previous
one, found by its ordering values, so a page costs one indexed query wherever it is in the table,
and rows inserted or deleted meanwhile neither repeat nor skip the rows that stay.

The ordering is the resource's ``ordering`` with the primary key appended, which makes it total.
A position is the list of those values as strings (``Field.value_to_string``), parsed back with
``Field.to_python``; it travels inside the site's signed cursors.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured, ValidationError
from django.db.models import Q, QuerySet

from ..protocol.errors import InvalidParams


class Keyset:
    """A total ordering of one model's rows, and the filters that seek within it."""

    def __init__(self, model: Any, ordering: list[str] | tuple[str, ...] | None) -> None:
        self.model = model
        pk = model._meta.pk
        self.columns: list[tuple[Any, bool]] = []  # (field, descending)
        for entry in ordering or ():
            descending = entry.startswith("-")
            name = entry.lstrip("-")
            field = self._field(name)
            if field.primary_key:
                self.columns.append((field, descending))
                break  # the primary key already makes the order total
            self.columns.append((field, descending))
        else:
            self.columns.append((pk, False))

    def _field(self, name: str) -> Any:
        opts = self.model._meta
        try:
            field = opts.pk if name == "pk" else opts.get_field(name)
        except FieldDoesNotExist:
            raise ImproperlyConfigured(f"{opts.label}: ordering names {name!r}, which is not a field of the "
                                       "model.") from None
        if not getattr(field, "concrete", False) or field.many_to_many or "__" in name:
            raise ImproperlyConfigured(f"{opts.label}: ordering {name!r} must be a concrete field of the model.")
        if field.null:
            # Where NULLs sort differs between databases, so a seek past one cannot be written portably.
            raise ImproperlyConfigured(f"{opts.label}: ordering {name!r} allows NULL, which keyset pagination cannot "
                                       "seek past; order by non-null fields.")
        return field

    @property
    def order_by(self) -> list[str]:
        return [f"{'-' if descending else ''}{field.attname}" for field, descending in self.columns]

    def ordered(self, queryset: QuerySet) -> QuerySet:
        return queryset.order_by(*self.order_by)

    def position_of(self, obj: Any) -> list[str]:
        """Where ``obj`` is in the ordering, as JSON-able strings."""
        return [field.value_to_string(obj) for field, _ in self.columns]

    def parse(self, position: Any) -> list[Any]:
        """The values of a position; a position that does not fit this ordering is ``-32602``."""
        if not isinstance(position, list) or len(position) != len(self.columns):
            raise InvalidParams("Invalid cursor")
        try:
            return [field.to_python(value) for (field, _), value in zip(self.columns, position, strict=True)]
        except (ValidationError, TypeError, ValueError):
            raise InvalidParams("Invalid cursor") from None

    def after(self, queryset: QuerySet, position: Any) -> QuerySet:
        """The rows that come after ``position`` (None: all of them), in order."""
        queryset = self.ordered(queryset)
        if position is None:
            return queryset
        values = self.parse(position)
        # (a, b, pk) > (x, y, z)  ⇔  a > x  ∨  (a = x ∧ b > y)  ∨  (a = x ∧ b = y ∧ pk > z),
        # with < for descending columns.
        condition = Q()
        for index, ((field, descending), value) in enumerate(zip(self.columns, values, strict=True)):
            step = Q(**{f"{field.attname}__{'lt' if descending else 'gt'}": value})
            for (earlier, _), earlier_value in zip(self.columns[:index], values[:index], strict=True):
                step &= Q(**{earlier.attname: earlier_value})
            condition |= step
        return queryset.filter(condition)
