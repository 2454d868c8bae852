"""
Prompts stored in the database (:class:`~django_mcp.models.McpPrompt`): checking a row before it
is saved, turning it into a :class:`~django_mcp.template_prompts.templates.TemplatePrompt`, and telling
clients when the list changed.

Staff write these, so they get less than a developer's template file: no ``complete:`` paths
(which name Python code), only the argument keys below.
"""

from __future__ import annotations

import logging
from typing import Any

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import transaction
from django.template import TemplateSyntaxError

from ..permissions import IsAuthenticated
from ..template_prompts.arguments import ArgumentError, form_from_specs
from ..template_prompts.engines import string_prompt_engine
from ..template_prompts.templates import TemplatePrompt


logger = logging.getLogger("django_mcp.prompts")

#: The keys an argument of a stored prompt may have.
STORED_ARGUMENT_KEYS = frozenset({"name", "title", "description", "type", "required", "default", "choices"})


def argument_specs(value: Any) -> list[dict[str, Any]]:
    """The ``arguments`` JSON as argument specs; ``ValidationError`` says what is wrong."""
    if not isinstance(value, list):
        raise ValidationError("A list of objects, one per argument.")
    for position, spec in enumerate(value, start=1):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"].isidentifier():
            raise ValidationError(f"Argument {position} needs a \"name\" that is an identifier (letters, digits, _).")
        unknown = sorted(set(spec) - STORED_ARGUMENT_KEYS)
        if unknown:
            raise ValidationError(f"Argument {spec['name']!r}: unknown keys {', '.join(unknown)}; "
                                  f"known: {', '.join(sorted(STORED_ARGUMENT_KEYS))}.")
        if "choices" in spec and not (isinstance(spec["choices"], list) and spec["choices"]):
            raise ValidationError(f"Argument {spec['name']!r}: choices must be a non-empty list.")
    names = [spec["name"] for spec in value]
    if len(set(names)) != len(names):
        raise ValidationError("Two arguments have the same name.")
    try:
        form_from_specs(value)
    except ArgumentError as error:
        raise ValidationError(str(error)) from None
    return value


def validate_row(row: Any) -> None:
    """``McpPrompt.clean()``: arguments, template, permission and name, each error on its field."""
    errors: dict[str, list[str]] = {}
    try:
        argument_specs(row.arguments)
    except ValidationError as error:
        errors["arguments"] = error.messages
    try:
        string_prompt_engine().from_string(row.template or "")
    except TemplateSyntaxError as error:
        errors["template"] = [f"The template does not compile: {error}"]
    if row.permission:
        app_label, _, codename = row.permission.partition(".")
        if not codename:
            errors["permission"] = ['Write it as "app_label.codename", e.g. "library.view_book".']
        elif apps.is_installed("django.contrib.auth"):
            from django.contrib.auth.models import Permission

            if not Permission.objects.filter(content_type__app_label=app_label, codename=codename).exists():
                errors["permission"] = [f"No permission {row.permission!r} exists."]
    if row.name:
        from ..sites import get_default_site

        registered = get_default_site().get_registered("prompt", row.name)
        if registered is not None:
            errors["name"] = [f"A prompt in code has this name ({registered.origin()}); it would never be served."]
    if errors:
        raise ValidationError(errors)


def prompt_from_row(row: Any, site: Any = None) -> TemplatePrompt:
    """The prompt a row stands for, guarded by its ``login_required`` and ``permission``."""
    permissions: list[Any] = []
    if row.login_required:
        permissions.append(IsAuthenticated)
    if row.permission:
        permissions.append(row.permission)  # a string is a HasPermission
    attrs = {"name": row.name, "title": row.title or None, "description": row.description or None,
             "template_string": row.template,
             "form_class": form_from_specs(row.arguments or [], f"{row.name}Arguments"),
             "site": site, "permission_classes": permissions or None, "stored_pk": row.pk, "__module__": __name__}
    return type(f"StoredPrompt_{row.pk}", (TemplatePrompt,), attrs)()


def _send() -> None:
    from ..notifications import notify_list_changed

    try:
        notify_list_changed("prompts")
    except Exception:
        # A channel layer that is down must not undo the staff member's edit; clients catch up
        # at their next prompts/list.
        logger.exception("Could not announce notifications/prompts/list_changed")


def announce_change() -> None:
    """After the transaction commits, tell every worker's clients that the prompt list changed."""
    transaction.on_commit(_send)
