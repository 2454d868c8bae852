"""Clean-up for ``mcp_clearsessions``: tasks past their TTL go, tasks whose worker is gone end."""

from typing import Any

from asgiref.sync import async_to_sync

from .runner import reap_lost
from .store import purge_expired


def clear_tasks(**kwargs: Any) -> str:
    """Receiver of :data:`~django_mcp.signals.clearing_expired`: what it did, for the command to print."""

    async def clear() -> tuple[int, int]:
        return await purge_expired(), await reap_lost()

    removed, lost = async_to_sync(clear)()
    return f"{removed} expired tasks (and looked at {lost} tasks whose worker had stopped)"
