from django.apps import AppConfig


class CallLogConfig(AppConfig):
    """The call log: a row per ``tools/call``, written in batches off the request path."""

    name = "django_mcp.call_log"
    label = "django_mcp_call_log"
    verbose_name = "MCP call log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from ..conf import follow_setting
        from ..signals import clearing_expired, flush_requested
        from .log import flush_call_log, prune_call_log, switch_call_log

        # The receiver of tool_called while CALL_LOG is on; off, a call does no work for the log.
        follow_setting("CALL_LOG", switch_call_log, uid="django_mcp_call_log_setting")
        clearing_expired.connect(prune_call_log, dispatch_uid="django_mcp_call_log")
        # The test client's "write it now": its tests read the log as soon as a call returns.
        flush_requested.connect(flush_call_log, dispatch_uid="django_mcp_call_log")
