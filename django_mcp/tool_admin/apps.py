from django.apps import AppConfig


class ToolAdminConfig(AppConfig):
    """The tool admin: a row per tool that staff switch on and off, retitle, restrict and rate-limit."""

    name = "django_mcp.tool_admin"
    label = "django_mcp_tool_admin"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ..hooks import register_hook
        from .policies import ToolAdminHook
        from .signals import connect

        connect()  # list_changed when rows, permissions or memberships change
        register_hook(ToolAdminHook())  # hidden tools, overrides and rate limits, on every site
