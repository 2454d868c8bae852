from django.apps import AppConfig


class ModelResourcesConfig(AppConfig):
    """Django models published as MCP resources (``ModelResource``), with their search tools and change notifications."""

    name = "django_mcp.model_resources"
    label = "django_mcp_model_resources"
    verbose_name = "MCP model resources"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
