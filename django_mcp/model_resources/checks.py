"""System checks of the model resources (``manage.py check``)."""

from typing import Any

from django.core import checks


def leading_column_indexed(model: Any, field: Any) -> bool:
    """Whether an index starts with ``field``: keyset pages seek on the ordering's first column."""
    if field.primary_key or field.unique or field.db_index:
        return True
    opts = model._meta
    names = {field.name, field.attname}
    leads = [index.fields[0].lstrip("-") for index in opts.indexes if index.fields]
    leads += [constraint.fields[0] for constraint in opts.constraints if getattr(constraint, "fields", None)]
    leads += [fields[0] for fields in opts.unique_together if fields]
    return any(lead in names for lead in leads)


@checks.register(checks.Tags.database)
def check_model_resources(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Model resources whose listing cannot use an index: each page would scan and sort the table."""
    from .options import ModelResource
    from ..sites import get_default_site

    messages: list[checks.CheckMessage] = []
    site = get_default_site()
    for model, options in list(site._registry.models.items()):
        if not isinstance(options, ModelResource) or not options.list_rows:
            continue
        field, _ = options.keyset.columns[0]
        if not leading_column_indexed(model, field):
            messages.append(checks.Warning(
                f"{type(options).__qualname__} lists {model._meta.label} ordered by {field.name!r}, which no index "
                "starts with: every page of resources/list will scan and sort the table.",
                hint=f"Add db_index=True to {model._meta.label}.{field.name} (or an index on "
                     f"({field.name}, {model._meta.pk.name})), or set ordering on an indexed field.",
                obj=model, id="django_mcp.W003"))
    return messages
