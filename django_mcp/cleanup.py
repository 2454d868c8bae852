"""Housekeeping for the database-backed stores."""

from datetime import timedelta

from channels.db import database_sync_to_async
from django.utils import timezone

from .conf import mcp_settings
from .events import get_event_store


async def clear_expired() -> tuple[int, int]:
    """Delete idle sessions (their events go with them) and events past their retention."""
    from .models import McpSession

    idle = timedelta(seconds=mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS)
    expired = McpSession.objects.filter(last_seen_at__lt=timezone.now() - idle)
    sessions = await database_sync_to_async(expired.count)()
    await database_sync_to_async(expired.delete)()
    store = get_event_store()
    events = await store.purge(timedelta(seconds=mcp_settings.EVENT_RETENTION_SECONDS)) if store else 0
    return sessions, events
