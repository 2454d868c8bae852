"""The checks a query tool's row passes before it is saved (``McpQueryTool.clean()``)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from .fields import allowed_models, check_fields, check_filters, check_ordering, published_fields
from .serving import site_named
from .tools import model_resource


def validate_row(row: Any) -> None:
    """``McpQueryTool.clean()``: each problem on its field, so the admin shows it where it belongs."""
    errors: dict[str, list[str]] = {}
    site = site_named(row.site)
    if row.document is not None:
        validate_saved_query(row, site)
        return
    model = row.model.model_class() if row.model_id else None
    if row.model_id and model is None:
        errors["model"] = ["This model no longer exists."]
    elif model is not None and model not in allowed_models(site):
        errors["model"] = [f"The site {row.site!r} does not publish {model._meta.label}; choose a model it publishes."]
    if model is not None and "model" not in errors:
        published = published_fields(model, model_resource(site, model))
        for name, check in (("fields", check_fields), ("filters", check_filters), ("ordering", check_ordering)):
            problems = check(getattr(row, name), published)
            if problems:
                errors[name] = problems
    errors.update(name_problems(row, site))
    if errors:
        raise ValidationError(errors)


def name_problems(row: Any, site: Any) -> dict[str, list[str]]:
    in_code = site.get_registered("tool", row.name) if row.name and site is not None else None
    if in_code is not None:
        return {"name": [f"A tool in code has this name ({in_code.origin()}); this one would never be served."]}
    return {}


def validate_saved_query(row: Any, site: Any) -> None:
    """A saved query's document must fit the site's queryable models; its model is the document's."""
    from django.contrib.contenttypes.models import ContentType

    from .saved import validate_document

    errors = name_problems(row, site)
    row.fields = row.fields or []  # the search's columns: unused by a saved query
    try:
        model = validate_document(row, site)
    except ValidationError as error:
        errors.update(error.message_dict)
    else:
        row.model = ContentType.objects.get_for_model(model)
    if errors:
        raise ValidationError(errors)
