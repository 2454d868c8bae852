"""App configuration: autodiscovers every installed app's ``mcp`` module, like the admin does."""

from django.apps import AppConfig


class SimpleMcpConfig(AppConfig):
    """django_mcp without autodiscovery; register primitives yourself."""

    name = "django_mcp"
    verbose_name = "MCP server"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)


class McpConfig(SimpleMcpConfig):
    """The default configuration: imports ``<app>.mcp`` for each installed app."""

    default = True

    def ready(self) -> None:
        super().ready()
        from .prompts.discovery import add_prompt_sources
        from .sites import autodiscover, site

        autodiscover()
        # Prompts staff write in the admin, and templates under mcp/prompts/ (docs/prompts.md).
        add_prompt_sources(site)
