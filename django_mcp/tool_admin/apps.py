from django.apps import AppConfig


class ToolAdminConfig(AppConfig):
    """The tool admin: a row per tool that staff switch on and off, retitle, restrict and rate-limit."""

    name = "django_mcp.tool_admin"
    label = "django_mcp_tool_admin"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ..conf import follow_setting
        from .policies import switch_tool_admin
        from .signals import connect

        connect()  # list_changed when rows, permissions or memberships change
        # The hook (hidden tools, overrides, rate limits) on every site while TOOL_ADMIN is on;
        # off, a call does no work for the tool admin at all.
        follow_setting("TOOL_ADMIN", switch_tool_admin, uid="django_mcp_tool_admin_setting")
