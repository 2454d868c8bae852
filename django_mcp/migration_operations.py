"""
Migration operations for models that moved out of the ``django_mcp`` app into feature apps of
their own, keeping their tables and their rows.

A database migrated before the move already has the table (``django_mcp`` 0001–0006 made it;
0007 then dropped the model from that app's state, leaving the table); a new database does not
(``django_mcp`` 0001_squashed_0007 never makes it). :class:`CreateModelIfMissing` serves both:
the model enters its new app's state, and the table is created only where it is missing.
:func:`adopt_content_types` moves the model's content type to the new app, so the permissions
granted on it, and the admin's history of its rows, carry over.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


class CreateModelIfMissing(migrations.CreateModel):
    """``CreateModel`` that leaves the table alone where it exists already (the model moved here)."""

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        model = to_state.apps.get_model(app_label, self.name)
        if model._meta.db_table in schema_editor.connection.introspection.table_names():
            return
        super().database_forwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"Create model {self.name} (unless its table exists: it moved here from django_mcp)"


def adopt_content_types(old_app_label: str, new_app_label: str, model_names: list[str]) -> migrations.RunPython:
    """
    Give ``old_app_label``'s content types of ``model_names`` to ``new_app_label`` (where that app
    has none yet), so permissions and admin log entries keep pointing at the moved models.
    """

    def forwards(apps: Any, schema_editor: Any) -> None:
        content_types = apps.get_model("contenttypes", "ContentType").objects.db_manager(schema_editor.connection.alias)
        for model in model_names:
            if not content_types.filter(app_label=new_app_label, model=model).exists():
                content_types.filter(app_label=old_app_label, model=model).update(app_label=new_app_label)

    def backwards(apps: Any, schema_editor: Any) -> None:
        content_types = apps.get_model("contenttypes", "ContentType").objects.db_manager(schema_editor.connection.alias)
        for model in model_names:
            if not content_types.filter(app_label=old_app_label, model=model).exists():
                content_types.filter(app_label=new_app_label, model=model).update(app_label=old_app_label)

    return migrations.RunPython(forwards, backwards, elidable=False)
