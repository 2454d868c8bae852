"""The ``django_mcp.oauth`` app: personal access tokens, the OAuth glue's checks and admin."""

from django.apps import AppConfig


class McpOAuthConfig(AppConfig):
    """OAuth for the MCP endpoints; needs ``oauth2_provider`` in ``INSTALLED_APPS`` too."""

    name = "django_mcp.oauth"
    label = "django_mcp_oauth"
    verbose_name = "MCP OAuth"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ..primitives import declare_kind_scopes
        from . import checks  # noqa: F401  (registers the system checks)
        from .scopes import KIND_SCOPES

        # Tokens need mcp:tools for tools and so on, unless REQUIRED_SCOPES says otherwise.
        declare_kind_scopes(KIND_SCOPES)
        from . import receivers

        receivers.connect()  # a revoked token's streams end at once
