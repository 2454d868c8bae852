from django.apps import AppConfig


class CoreOnlyConfig(AppConfig):
    """The app of a project that installs django_mcp's core and no feature app (settings.py beside it)."""

    name = "tests.core_only"
    label = "core_only"
