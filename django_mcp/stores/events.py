"""
The event store behind resumable SSE streams of legacy sessions (2025-11-25 polling, SEP-1699;
MCP spec 2025-11-25, basic/transports#streamable-http): every event sent on a POST's SSE stream is stored under ``<stream>.<seq>``, so a
client may reconnect with ``GET`` + ``Last-Event-ID`` — to any worker — and receive what it missed,
then the rest live. ``DJANGO_MCP["EVENT_STORE"] = None`` turns resumability off.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from channels.db import database_sync_to_async
from django.db import DatabaseError
from django.utils import timezone

from ..conf import mcp_settings


logger = logging.getLogger("django_mcp.stores.events")


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as replayed: its sequence in the stream, the message, and whether it is the last."""

    stream_id: str
    seq: int
    message: dict[str, Any] | None
    final: bool

    @property
    def event_id(self) -> str:
        return f"{self.stream_id}.{self.seq}"


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``<stream>.<seq>`` → (stream, seq); None for ids we did not mint."""
    stream_id, _, seq = event_id.strip().rpartition(".")
    if not stream_id or not seq.isdigit() or len(stream_id) > 32:
        return None
    return stream_id, int(seq)


class BaseEventStore:
    """Append events of a stream and read them back after a given sequence."""

    async def append(self, session_id: str, event: StoredEvent) -> None:
        raise NotImplementedError(".append() must be overridden.")

    async def after(self, session_id: str, stream_id: str, seq: int) -> list[StoredEvent] | None:
        """Events after ``seq``, or None when the session has no such stream."""
        raise NotImplementedError(".after() must be overridden.")

    async def purge(self, older_than: timedelta) -> int:
        """Remove events stored longer ago than ``older_than``; the number removed."""
        raise NotImplementedError(".purge() must be overridden.")


class DatabaseEventStore(BaseEventStore):
    """Events as rows of :class:`~django_mcp.models.McpEvent`, deleted with their session."""

    def _model(self) -> Any:
        from ..models import McpEvent

        return McpEvent

    async def append(self, session_id: str, event: StoredEvent) -> None:
        try:
            await database_sync_to_async(self._model().objects.create)(
                session_id=session_id, stream_id=event.stream_id, seq=event.seq, message=event.message,
                final=event.final,
            )
        except DatabaseError:
            # The session may have been deleted while its request ran; the event has nowhere to go.
            logger.info("Could not store event %s of session %s", event.event_id, session_id, exc_info=True)

    async def after(self, session_id: str, stream_id: str, seq: int) -> list[StoredEvent] | None:
        return await database_sync_to_async(self._after)(session_id, stream_id, seq)

    def _after(self, session_id: str, stream_id: str, seq: int) -> list[StoredEvent] | None:
        rows = self._model().objects.filter(session_id=session_id, stream_id=stream_id)
        if not rows.exists():
            return None
        return [StoredEvent(stream_id, row.seq, row.message, row.final)
                for row in rows.filter(seq__gt=seq, message__isnull=False).order_by("seq")]

    async def purge(self, older_than: timedelta) -> int:
        model = self._model()
        deleted, _ = await database_sync_to_async(
            model.objects.filter(created_at__lt=timezone.now() - older_than).delete)()
        return deleted


def get_event_store() -> BaseEventStore | None:
    """The configured store, or None when resumability is off."""
    store_class = mcp_settings.EVENT_STORE
    if store_class is None:
        return None
    instance = _stores.get(store_class)
    if instance is None:
        instance = _stores[store_class] = store_class()
    return instance


_stores: dict[type, BaseEventStore] = {}
