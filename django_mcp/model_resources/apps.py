from django.apps import AppConfig


class ModelResourcesConfig(AppConfig):
    """Django models published as MCP resources (``ModelResource``), with their search tools and change notifications."""

    name = "django_mcp.model_resources"
    label = "django_mcp_model_resources"
    verbose_name = "MCP model resources"

    def ready(self) -> None:
        # The options (and Django REST framework, their serializers) now, on the thread that sets
        # Django up: the system checks need them, and imported first by a check they would load
        # on runserver's own thread while its autoreloader walks sys.modules on another — DRF's
        # failed try of django.contrib.postgres.fields (without psycopg) left sys.modules mid-walk
        # and killed the reloader with a KeyError.
        from . import checks, options  # noqa: F401  (checks registers the system checks)
