from django.apps import AppConfig


class QueryingConfig(AppConfig):
    """A schema with relations of every kind, hidden fields and row-level rules, for the query tool's tests."""

    name = "tests.querying"
    label = "querying"
    default_auto_field = "django.db.models.AutoField"
