"""
What admin actions as tools (``admin_actions.py``) borrow from the admin: an action's parts on
every Django version, the fields a changelist filters and searches on, and a message storage that
keeps what an action says.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.admin import SimpleListFilter
from django.contrib.messages.storage.base import BaseStorage
from django.core.exceptions import FieldDoesNotExist

from ..resources.model_schema import json_schema, target_field


def action_parts(action: Any) -> tuple[Any, str, Any]:
    """
    ``(func, name, description)`` of an admin action: Django 6.1 returns ``Action`` objects whose
    tuple unpacking is deprecated, earlier versions plain tuples.
    """
    if hasattr(action, "func") and hasattr(action, "name"):
        return action.func, action.name, action.description
    func, name, description = action
    return func, name, description


class CollectedMessages(BaseStorage):
    """A message storage that keeps what ``message_user`` adds, for the tool's result; nothing is stored."""

    def _get(self, *args: Any, **kwargs: Any) -> tuple[list[Any], bool]:
        return [], True

    def _store(self, messages: list[Any], response: Any, *args: Any, **kwargs: Any) -> list[Any]:
        return []


def field_at(model: Any, path: str) -> tuple[str, Any] | None:
    """The longest prefix of ``path`` (``writer__name__icontains``) that names a field, and that field."""
    opts, parts, field = model._meta, [], None
    for part in path.split("__"):
        if opts is None:
            break
        try:
            field = opts.pk if part == "pk" else opts.get_field(part)
        except FieldDoesNotExist:
            break
        parts.append(part)
        opts = field.related_model._meta if field.is_relation and field.related_model is not None else None
    return ("__".join(parts), field) if parts else None


def filter_targets(model: Any, list_filter: Iterable[Any], search_fields: Iterable[str]) -> tuple[
        dict[str, Any], dict[str, type[SimpleListFilter]]]:
    """
    The field paths of ``list_filter`` and ``search_fields``, and ``SimpleListFilter`` classes by
    ``parameter_name``; other ``ListFilter`` classes read parameters nothing declares: left out.
    """
    paths: dict[str, Any] = {}
    simple: dict[str, type[SimpleListFilter]] = {}
    for item in list_filter or ():
        item = item[0] if isinstance(item, (tuple, list)) else item
        if isinstance(item, type) and issubclass(item, SimpleListFilter) and item.parameter_name:
            simple[item.parameter_name] = item
        elif isinstance(item, str) and (found := field_at(model, item)):
            paths.setdefault(*found)
    for name in search_fields or ():
        if found := field_at(model, str(name).lstrip("^=@")):
            paths.setdefault(*found)
    return paths, simple


def value_schema(field: Any) -> dict[str, Any]:
    """What a filter compares a field with: its own value, or the related row's key for a relation."""
    if field.is_relation and field.related_model is not None:
        field = target_field(field) if (field.many_to_one or field.one_to_one) and field.concrete \
            else target_field(field.related_model._meta.pk)
    schema = json_schema(field)
    return schema["anyOf"][0] if "anyOf" in schema else schema
