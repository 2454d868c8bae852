"""
Resumable POST streams of legacy sessions (2025-11-25 and later; MCP spec 2025-11-25, basic/transports#streamable-http, SEP-1699).

Once a response turns into an SSE stream, the server first sends a *priming* event — an id, a
``retry:`` delay and empty data — so the client can always reconnect. Every later event is kept in
the event store under ``<stream>.<seq>``. If the connection ends early (the client dropped it, or
the handler called ``ctx.close_sse_stream()`` to make the client poll), the request keeps running,
its events keep being stored and are also published to the stream's channel-layer group; a
``GET`` with ``Last-Event-ID`` on any worker replays what was missed, then follows live.
"""

import asyncio
import secrets
from typing import Any

from ..conf import mcp_settings
from ..stores.events import StoredEvent, get_event_store, parse_event_id
from ..protocol.versions import at_least
from ..fanout import STREAM_EVENT, publish, stream_group
from . import sse
from .refusals import Refusal


class ResumableStreamMixin:
    """The resumable half of the legacy POST and GET handling."""

    resumable = False
    stream_id: str | None = None
    event_seq = 0
    resume_stream_id: str | None = None
    resume_seq = 0

    def make_resumable(self, session: Any) -> bool:
        """Decide once per request; older revisions choke on empty priming data (SDK convention)."""
        self.resumable = get_event_store() is not None and at_least(session.protocol_version, "2025-11-25")
        return self.resumable

    @property
    def connection_gone(self) -> bool:
        return self.disconnected or self.response_ended

    async def start_resumable_sse(self) -> None:
        self.stream_id = secrets.token_hex(8)
        store = get_event_store()
        if store is not None and self.session is not None:
            # The priming row makes the stream known, so a reconnect right after it can resume.
            await store.append(self.session.id, StoredEvent(self.stream_id, 0, None, False))
        await self.start_sse(self.response_headers())
        await self.send_sse(sse.event("", event_id=f"{self.stream_id}.0",
                                      retry_ms=mcp_settings.SSE_RETRY_MILLISECONDS))

    async def emit_resumable(self, message: dict[str, Any], *, final: bool = False) -> None:
        """Store the event; send it if the client is still connected, else publish it for resumers."""
        if self.stream_id is None:
            if self.connection_gone:
                return
            await self.start_resumable_sse()
        self.event_seq += 1
        event = StoredEvent(self.stream_id, self.event_seq, message, final)
        store = get_event_store()
        if store is not None and self.session is not None:
            await store.append(self.session.id, event)
        if self.connection_gone:
            # Only after the connection ended can anyone be resuming, so only then publish.
            await publish(stream_group(event.stream_id), {
                "type": STREAM_EVENT, "stream": event.stream_id, "seq": event.seq,
                "message": message, "final": final,
            })
            return
        await self.send_sse(sse.message_event(message, event_id=event.event_id))

    async def close_stream(self) -> None:
        """End the connection but not the request: the client reconnects after ``retry`` ms."""
        if not self.resumable or self.connection_gone:
            return
        if self.stream_id is None:
            await self.start_resumable_sse()
        await self.end_sse()

    async def resume_stream(self, session: Any, last_event_id: str) -> None:
        """Replay the events of one stream after ``Last-Event-ID``, then follow it live."""
        parsed = parse_event_id(last_event_id)
        store = get_event_store()
        if parsed is None or store is None:
            await self.refuse(Refusal("Unknown Last-Event-ID"))
            return
        self.resume_stream_id, self.resume_seq = parsed
        self._resume_lock = asyncio.Lock()
        async with self._resume_lock:
            # Join first: an event stored after the replay query still reaches us live.
            await self.join(stream_group(self.resume_stream_id))
            events = await store.after(session.id, self.resume_stream_id, self.resume_seq)
            if events is None:
                await self.refuse(Refusal("Last-Event-ID names no stream of this session"))
                return
            await self.start_sse()
            for event in events:
                await self._send_resumed(event)

    async def _send_resumed(self, event: StoredEvent) -> None:
        if event.seq <= self.resume_seq or self.connection_gone:
            return
        self.resume_seq = event.seq
        await self.send_sse(sse.message_event(event.message, event_id=event.event_id))
        if event.final:
            await self.end_sse()

    async def mcp_stream_event(self, event: dict[str, Any]) -> None:
        if event.get("stream") != self.resume_stream_id:
            return
        async with self._resume_lock:
            await self._send_resumed(StoredEvent(event["stream"], event["seq"], event["message"], event["final"]))
