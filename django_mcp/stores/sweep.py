"""
Removing what has expired — idle sessions, stream events past their retention — from cron
(``manage.py mcp_clearsessions``) and, now and then, from the workers themselves, so a server
nobody set a cron job up for does not grow without bound.
"""

import asyncio
import logging
from datetime import timedelta

from ..conf import mcp_settings
from .events import get_event_store
from .sessions import get_session_store


logger = logging.getLogger("django_mcp.stores")

_last_sweep: float | None = None
_running: set[asyncio.Task[None]] = set()


async def clear_expired() -> tuple[int, int]:
    """Ask the configured stores to drop idle sessions and events past their retention."""
    sessions = await get_session_store().clear_expired()
    store = get_event_store()
    events = await store.purge(timedelta(seconds=mcp_settings.EVENT_RETENTION_SECONDS)) if store else 0
    return sessions, events


def sweep_now_and_then() -> None:
    """
    Start a sweep in the background if this worker has not run one for ``SESSION_SWEEP_SECONDS``;
    called when a session opens, so an idle server does no work.
    """
    global _last_sweep
    interval = mcp_settings.SESSION_SWEEP_SECONDS
    if interval is None:
        return
    loop = asyncio.get_running_loop()
    now = loop.time()
    if _last_sweep is not None and now - _last_sweep < interval:
        return
    _last_sweep = now
    task = loop.create_task(_sweep())
    _running.add(task)
    task.add_done_callback(_running.discard)


async def _sweep() -> None:
    try:
        sessions, events = await clear_expired()
    except Exception:
        # A sweep that fails (the database briefly away) is simply tried again next interval.
        logger.warning("Could not remove expired MCP sessions", exc_info=True)
        return
    if sessions or events:
        logger.info("Removed %d expired MCP sessions and %d old stream events", sessions, events)
