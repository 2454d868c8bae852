"""App configuration: autodiscovers every installed app's ``mcp`` module, like the admin does."""

from django.apps import AppConfig

from .stdio import redirect_if_serving_stdio


# ``manage.py mcp_stdio``: Django imports this module while it populates the apps, before any
# model, ready() or mcp.py of the project runs, which is the earliest a management command can
# act. From here on only protocol messages reach the real stdout (MCP spec 2025-11-25,
# basic/transports#stdio); ``python -m django_mcp.stdio`` does it before Django starts at all.
redirect_if_serving_stdio()


class SimpleMcpConfig(AppConfig):
    """django_mcp without autodiscovery; register primitives yourself."""

    name = "django_mcp"
    verbose_name = "MCP server"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
        from .transports.credential_watch import connect_user_deactivation

        connect_user_deactivation()  # a deactivated user's streams end at once


class McpConfig(SimpleMcpConfig):
    """The default configuration: imports ``<app>.mcp`` for each installed app."""

    default = True

    def ready(self) -> None:
        super().ready()
        from .sites import autodiscover

        autodiscover()
