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
        from .hooks import register_hook
        from .signals import clearing_expired, tool_called
        from .tools.calls import prune_call_log, record_call
        from .tools.policies import ToolAdminHook
        from .tools.signals import connect

        connect()  # the tool admin: list_changed when rows or permissions change
        register_hook(ToolAdminHook())  # the tool admin's rows: hidden tools, overrides, rate limits
        tool_called.connect(record_call, dispatch_uid="django_mcp_call_log")  # the call log
        clearing_expired.connect(prune_call_log, dispatch_uid="django_mcp_call_log")


class McpConfig(SimpleMcpConfig):
    """The default configuration: imports ``<app>.mcp`` for each installed app."""

    default = True

    def ready(self) -> None:
        super().ready()
        from .prompts import checks  # noqa: F401  (registers the prompt engine check)
        from .prompts.discovery import add_prompt_sources
        from .sites import autodiscover, site

        autodiscover()
        # Prompts staff write in the admin, and templates under mcp/prompts/ (docs/prompts.md).
        add_prompt_sources(site)
        # Read-only query tools staff define in the admin (docs/query_tools.md).
        from .tools.query_tools import add_query_tool_source

        add_query_tool_source(site)
