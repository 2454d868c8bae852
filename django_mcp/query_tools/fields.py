"""
What a query tool may read of its model: the fields it may return, filter and order on, the
lookups it may offer, and the models a site's query tools may use. No model of this app is
imported here, so the tool and the admin's checks can use it without a cycle.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models


#: Most rows one call returns, whatever a row asks: a page must stay small enough for a model's context.
MAX_ROW_LIMIT = 100
#: The lookups staff may offer as arguments.
LOOKUPS = ("exact", "iexact", "contains", "icontains", "gt", "gte", "lt", "lte", "range", "in", "isnull")
TEXT_LOOKUPS = frozenset({"iexact", "contains", "icontains"})
ORDER_LOOKUPS = frozenset({"gt", "gte", "lt", "lte", "range"})
#: The argument that carries the cursor, so no filter may take its name.
CURSOR_ARGUMENT = "cursor"


def published_fields(model: Any, resource: Any = None) -> dict[str, Any]:
    """
    Name → model field of what a query tool may return, filter and order on: the concrete fields,
    and when the model is published by a ``ModelResource``, only those its serializer writes, so a
    query tool never reaches what the developer kept out (a secret flag, an owner).
    """
    fields = {field.name: field for field in model._meta.concrete_fields}
    if issubclass(model, AbstractBaseUser):
        fields.pop("password", None)  # never, even for superusers choosing "any model"
    if resource is not None:
        written = resource.get_serializer_class()().fields
        fields = {name: field for name, field in fields.items() if name in written}
    return fields


def filterable(field: Any) -> bool:
    # JSON documents and files have no lookups a client could use sensibly here.
    return not isinstance(field, (models.JSONField, models.FileField, models.BinaryField))


def lookup_problem(field: Any, lookup: str) -> str | None:
    """Why ``lookup`` does not fit ``field``, or None."""
    if lookup not in LOOKUPS:
        return f"unknown lookup {lookup!r}; known: {', '.join(LOOKUPS)}"
    if lookup in TEXT_LOOKUPS and not isinstance(field, (models.CharField, models.TextField)):
        return f"{lookup} is for text fields"
    if lookup in ORDER_LOOKUPS and isinstance(field, models.BooleanField):
        return f"{lookup} does not apply to a boolean"
    if lookup == "isnull" and not field.null:
        return "isnull needs a field that allows NULL"
    return None


def argument_name(field_name: str, lookup: str) -> str:
    """``title`` + ``icontains`` → ``title__icontains``; ``exact`` is the bare field name."""
    return field_name if lookup == "exact" else f"{field_name}__{lookup}"


def check_fields(value: Any, published: dict[str, Any]) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(name, str) for name in value):
        return ['A non-empty list of field names, e.g. ["id", "title"].']
    if len(set(value)) != len(value):
        return ["A field is listed twice."]
    unknown = [name for name in value if name not in published]
    return [f"Not a field this tool may return: {', '.join(unknown)}. Choose among {', '.join(published)}."] \
        if unknown else []


def check_filters(value: Any, published: dict[str, Any]) -> list[str]:
    if not isinstance(value, dict):
        return ['An object of field → list of lookups, e.g. {"title": ["icontains"]}.']
    errors = []
    for name, lookups in value.items():
        field = published.get(name)
        if field is None or not filterable(field):
            errors.append(f"{name!r} is not a field this tool may filter on.")
            continue
        if not isinstance(lookups, list) or not lookups or len(set(map(str, lookups))) != len(lookups):
            errors.append(f"{name!r}: a non-empty list of different lookups.")
            continue
        for lookup in lookups:
            problem = lookup_problem(field, lookup) if isinstance(lookup, str) else "lookups are strings"
            if problem:
                errors.append(f"{name!r}: {problem}.")
            elif argument_name(name, lookup) == CURSOR_ARGUMENT:
                errors.append(f"{name!r}: its argument would be called {CURSOR_ARGUMENT!r}, which carries the cursor.")
    return errors


def check_ordering(value: Any, published: dict[str, Any]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(entry, str) for entry in value):
        return ['A list of field names, "-" before a name for descending, e.g. ["-published", "title"].']
    names = [entry.removeprefix("-") for entry in value]
    if len(set(names)) != len(names):
        return ["A field is listed twice."]
    unknown = [name for name in names if name not in published or not filterable(published[name])]
    return [f"Cannot order by {', '.join(unknown)}."] if unknown else []


def allowed_models(site: Any) -> list[Any]:
    """The models a query tool of ``site`` may read: those it publishes, or any when it publishes none."""
    every = apps.get_models()
    if site is None:
        return list(every)
    registered = [model for model in every if site.model_options_or_none(model) is not None]
    return registered or list(every)
