from django.apps import AppConfig


class ToolAdminConfig(AppConfig):
    """The tool admin: a row per tool that staff switch on and off, retitle, restrict and rate-limit."""

    name = "django_mcp.tool_admin"
    label = "django_mcp_tool_admin"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import setting_changed

        from .policies import apply_tool_admin_setting
        from .signals import connect

        connect()  # list_changed when rows, permissions or memberships change
        # The hook (hidden tools, overrides, rate limits) on every site while TOOL_ADMIN is on;
        # off, a call does no work for the tool admin at all.
        apply_tool_admin_setting()
        setting_changed.connect(apply_tool_admin_setting, dispatch_uid="django_mcp_tool_admin_setting")
