"""Remove idle legacy sessions, old stream events and old tool calls; run it from cron like ``clearsessions``."""

from datetime import timedelta

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand

from django_mcp.conf import mcp_settings
from django_mcp.stores.events import get_event_store
from django_mcp.stores.sessions import get_session_store


async def clear_expired() -> tuple[int, int]:
    """Ask the configured stores to drop idle sessions and events past their retention."""
    sessions = await get_session_store().clear_expired()
    store = get_event_store()
    events = await store.purge(timedelta(seconds=mcp_settings.EVENT_RETENTION_SECONDS)) if store else 0
    return sessions, events


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
