"""Remove idle legacy sessions, old stream events and old tool calls; run it from cron like ``clearsessions``."""

from datetime import timedelta

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand

from django_mcp.conf import mcp_settings
from django_mcp.stores.sweep import clear_expired


def prune_call_log() -> int:
    """Delete tool calls older than ``CALL_LOG_RETENTION_DAYS`` (None keeps them all)."""
    days = mcp_settings.CALL_LOG_RETENTION_DAYS
    if days is None:
        return 0
    from django.utils import timezone

    from django_mcp.tools.models import McpToolCall

    deleted, _ = McpToolCall.objects.filter(created__lt=timezone.now() - timedelta(days=days)).delete()
    return deleted


class Command(BaseCommand):
    help = "Delete MCP sessions idle longer than SESSION_IDLE_TIMEOUT_SECONDS and events older than " \
           "EVENT_RETENTION_SECONDS, through the configured SESSION_STORE and EVENT_STORE."

    def handle(self, *args, **options):
        sessions, events = async_to_sync(clear_expired)()
        calls = prune_call_log()
        self.stdout.write(f"Removed {sessions} expired sessions, {events} old stream events and {calls} old tool "
                          "calls.")
