from django.apps import AppConfig


class CallLogConfig(AppConfig):
    """The call log: a row per ``tools/call``, written in batches off the request path."""

    name = "django_mcp.call_log"
    label = "django_mcp_call_log"
    verbose_name = "MCP call log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ..signals import clearing_expired, tool_called
        from .log import prune_call_log, record_call

        tool_called.connect(record_call, dispatch_uid="django_mcp_call_log")
        clearing_expired.connect(prune_call_log, dispatch_uid="django_mcp_call_log")
