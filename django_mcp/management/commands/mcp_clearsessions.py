"""Remove idle legacy sessions and old stream events; run it from cron like ``clearsessions``."""

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


class Command(BaseCommand):
    help = "Delete MCP sessions idle longer than SESSION_IDLE_TIMEOUT_SECONDS and events older than " \
           "EVENT_RETENTION_SECONDS, through the configured SESSION_STORE and EVENT_STORE."

    def handle(self, *args, **options):
        sessions, events = async_to_sync(clear_expired)()
        self.stdout.write(f"Removed {sessions} expired sessions and {events} old stream events.")
