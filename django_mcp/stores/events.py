"""
The event store behind resumable SSE streams of legacy sessions (2025-11-25 polling, SEP-1699;
MCP spec 2025-11-25, basic/transports#streamable-http): every event sent on a POST's SSE stream is stored under ``<stream>.<seq>``, so a
client may reconnect with ``GET`` + ``Last-Event-ID`` — to any worker — and receive what it missed,
then the rest live. ``DJANGO_MCP["EVENT_STORE"] = None`` turns resumability off.
"""

import logging
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import DatabaseError
from django.utils import timezone

from ..conf import mcp_settings
from ..threads import in_database_thread


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


# What we mint: 16 hex digits, a dot, a decimal sequence. Anything else (non-ASCII digits, a
# 5,000-digit number, spaces inside) is not one of our ids.
_EVENT_ID = re.compile(r"([0-9a-f]{1,32})\.([0-9]{1,9})", re.ASCII)


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``<stream>.<seq>`` → (stream, seq); None for ids we did not mint."""
    found = _EVENT_ID.fullmatch(event_id.strip(" \t"))
    if found is None:
        return None
    return found.group(1), int(found.group(2))


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """What a resumer needs to know about a stream beyond its events."""

    #: The id of the request whose answer the stream carries (from the priming row).
    request_id: Any
    #: Whether the stream's final event (the answer, or the end of a cancelled request) is stored.
    finished: bool


def is_progress(message: dict[str, Any] | None) -> bool:
    return bool(message) and message.get("method") == "notifications/progress"


class BaseEventStore:
    """
    Append events of a stream and read them back after a given sequence. Sequence 0 is the
    priming row: it opens the stream, and its message is ``{"requestId": <id>}``, never replayed.
    """

    async def append(self, session_id: str, event: StoredEvent) -> None:
        """
        Store one event. A ``notifications/progress`` may replace the stream's earlier one: only
        the latest progress matters to a client catching up, and a long task must not leave a row
        per step.
        """
        raise NotImplementedError(".append() must be overridden.")

    async def after(self, session_id: str, stream_id: str, seq: int, limit: int = 200) -> list[StoredEvent] | None:
        """At most ``limit`` events after ``seq`` in order, or None when the session has no such stream."""
        raise NotImplementedError(".after() must be overridden.")

    async def describe(self, session_id: str, stream_id: str) -> StreamInfo | None:
        """The stream's request and whether it has finished; None when there is no such stream."""
        raise NotImplementedError(".describe() must be overridden.")

    async def purge(self, older_than: timedelta) -> int:
        """
        Remove the events of finished streams whose last event is older than ``older_than``; the
        number removed. Streams still running keep theirs (they go with their session).
        """
        raise NotImplementedError(".purge() must be overridden.")


class DatabaseEventStore(BaseEventStore):
    """Events as rows of :class:`~django_mcp.models.McpEvent`, deleted with their session."""

    def _model(self) -> Any:
        from ..models import McpEvent

        return McpEvent

    def _in_thread(self, fn: Any) -> Any:
        return in_database_thread(fn, self._model())

    async def append(self, session_id: str, event: StoredEvent) -> None:
        try:
            await self._in_thread(self._append)(session_id, event)
        except DatabaseError:
            # The session may have been deleted while its request ran; the event has nowhere to go.
            logger.info("Could not store event %s of session %s", event.event_id, session_id, exc_info=True)

    def _append(self, session_id: str, event: StoredEvent) -> None:
        model = self._model()
        if is_progress(event.message):
            replaced = model.objects.filter(
                session_id=session_id, stream_id=event.stream_id, message__method="notifications/progress",
            ).update(seq=event.seq, message=event.message, created_at=timezone.now())
            if replaced:
                return
        model.objects.create(session_id=session_id, stream_id=event.stream_id, seq=event.seq,
                             message=event.message, final=event.final)

    async def after(self, session_id: str, stream_id: str, seq: int, limit: int = 200) -> list[StoredEvent] | None:
        return await self._in_thread(self._after)(session_id, stream_id, seq, limit)

    def _after(self, session_id: str, stream_id: str, seq: int, limit: int) -> list[StoredEvent] | None:
        rows = self._model().objects.filter(session_id=session_id, stream_id=stream_id)
        events = [StoredEvent(stream_id, row.seq, row.message, row.final)
                  for row in rows.filter(seq__gt=seq).order_by("seq")[:limit]]
        if not events and not rows.exists():
            return None
        return events

    async def describe(self, session_id: str, stream_id: str) -> StreamInfo | None:
        return await self._in_thread(self._describe)(session_id, stream_id)

    def _describe(self, session_id: str, stream_id: str) -> StreamInfo | None:
        rows = self._model().objects.filter(session_id=session_id, stream_id=stream_id)
        priming = rows.filter(seq=0).values_list("message", flat=True).first()
        finished = rows.filter(final=True).exists()
        if priming is None and not finished and not rows.exists():
            return None
        return StreamInfo((priming or {}).get("requestId"), finished)

    async def purge(self, older_than: timedelta) -> int:
        return await self._in_thread(self._purge)(older_than)

    def _purge(self, older_than: timedelta) -> int:
        model = self._model()
        cutoff = timezone.now() - older_than
        finished = model.objects.filter(final=True).values("stream_id")
        recent = model.objects.filter(created_at__gte=cutoff).values("stream_id")
        deleted, _ = model.objects.filter(stream_id__in=finished).exclude(stream_id__in=recent).delete()
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
