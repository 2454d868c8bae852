"""
Resumable POST streams of legacy sessions (2025-11-25 and later; MCP spec 2025-11-25,
basic/transports#resumability-and-redelivery, SEP-1699).

Once a response turns into an SSE stream, the server first sends a *priming* event — an id, a
``retry:`` delay and empty data — so the client can always reconnect. Every later event is kept in
the event store under ``<stream>.<seq>``. If the connection ends early (the client dropped it, or
the handler called ``ctx.close_sse_stream()`` to make the client poll), the request keeps running,
its events keep being stored and are also published to the stream's channel-layer group; a
``GET`` with ``Last-Event-ID`` on any worker replays what was missed, then follows live.

Nothing a resumer is owed may be lost, and no resumed stream may stay open for nothing:

- the request's worker (the *owner*) listens for probes while the request runs. A resumer probes
  it at once — which also tells an owner that has not noticed the old connection die to stop
  writing there and publish instead — and then every ``STREAM_LIVENESS_SECONDS``;
- a sequence gap in what arrives live, or a probe answered, makes the resumer re-read the store,
  so an event sent to a dead connection or dropped by a full channel still arrives;
- the stream ends after its final event; a cancelled request stores a final marker with no
  message (it gets no answer); the session ending ends it; and an owner that no longer answers
  (its worker died) gets a JSON-RPC error stored as the final event, so the client is answered.
"""

import asyncio
import logging
import secrets
from typing import Any

from django.db import DatabaseError

from ..conf import mcp_settings
from ..fanout import STREAM_ALIVE, STREAM_EVENT, STREAM_PROBE, publish, send_to_channel, session_group, stream_group
from ..protocol import jsonrpc
from ..protocol.errors import InternalError
from ..protocol.versions import at_least
from ..stores.events import StoredEvent, get_event_store, parse_event_id
from . import sse
from .refusals import Refusal


logger = logging.getLogger("django_mcp.transports")


def stream_owner_group(stream_id: str) -> str:
    """The group of the worker running a stream's request, for resumers' probes."""
    return f"mcp.stream-owner.{stream_id}"


class ResumableStreamMixin:
    """The resumable half of the legacy POST and GET handling (used with ``LegacySessionMixin``)."""

    resumable = False
    stream_id: str | None = None
    stream_request_id: Any = None
    event_seq = 0
    resume_stream_id: str | None = None
    resume_seq = 0
    resume_session_id: str | None = None
    _probe_reply: asyncio.Future[int] | None = None

    def make_resumable(self, session: Any, request_id: Any = None) -> bool:
        """Decide once per request; older revisions choke on empty priming data (SDK convention)."""
        self.resumable = get_event_store() is not None and at_least(session.protocol_version, "2025-11-25")
        self.stream_request_id = request_id
        return self.resumable

    # The owner --------------------------------------------------------------------------------

    async def start_resumable_sse(self) -> None:
        self.stream_id = secrets.token_hex(8)
        store = get_event_store()
        if store is not None and self.session is not None:
            # The events refer to the session's row, which a new session may not have yet. With
            # the database away the request is served all the same; its events cannot be stored
            # (the store logs that), so a reconnect could not resume it.
            try:
                await self.session.persist()
            except DatabaseError:
                logger.info("Could not store session %s for its stream's events", self.session.id, exc_info=True)
            # The priming row makes the stream known, so a reconnect right after it can resume.
            await store.append(self.session.id, StoredEvent(self.stream_id, 0, {"requestId": self.stream_request_id},
                                                            False))
        # Reachable by resumers from now until the request ends, whatever happens to the connection.
        # Without the channel layer (Redis away) the request is still served; a resumer would
        # then find the store only, and take silence for a dead owner.
        try:
            await self.join(stream_owner_group(self.stream_id))
        except Exception:
            logger.warning("Stream %s cannot be probed by resumers: channel layer unavailable", self.stream_id,
                           exc_info=True)
        await self.start_sse(self.response_headers())
        await self.send_sse(sse.event("", event_id=f"{self.stream_id}.0",
                                      retry_ms=mcp_settings.SSE_RETRY_MILLISECONDS))

    async def emit_resumable(self, message: dict[str, Any] | None, *, final: bool = False) -> None:
        """
        Store the event; send it if the client is still connected, else publish it for resumers.
        ``message=None`` with ``final`` ends the stream without an answer (a cancelled request).
        """
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
            # Only after the connection ended can anyone be resuming, so only then publish. The
            # event is stored already: a resumer that misses this reads it from the store.
            try:
                await publish(stream_group(event.stream_id), {
                    "type": STREAM_EVENT, "stream": event.stream_id, "seq": event.seq,
                    "message": message, "final": final,
                })
            except Exception:
                logger.warning("Could not publish event %s to resumers", event.event_id, exc_info=True)
            return
        if message is not None:
            await self.send_sse(sse.message_event(message, event_id=event.event_id))

    async def end_cancelled_stream(self) -> None:
        """A cancelled request has no answer (MCP spec 2025-11-25, basic/utilities/cancellation); its stream ends."""
        if self.stream_id is not None:
            await self.emit_resumable(None, final=True)
            await self.end_sse()

    async def close_stream(self) -> None:
        """End the connection but not the request: the client reconnects after ``retry`` ms."""
        if not self.resumable or self.connection_gone:
            return
        if self.stream_id is None:
            await self.start_resumable_sse()
        await self.end_sse()

    async def mcp_stream_probe(self, event: dict[str, Any]) -> None:
        """A resumer asks whether this request still runs; it does, since we are here."""
        if event.get("stream") != self.stream_id or self.stream_id is None:
            return
        if not self.connection_gone:
            # The client reads from a new connection: this one is dead to it, though the server has
            # not noticed. Events go to the store and the resumer from now on.
            await self.end_sse()
        await send_to_channel(event["reply_to"], stream_group(self.stream_id),
                              {"type": STREAM_ALIVE, "stream": self.stream_id, "seq": self.event_seq}, patience=1.0)

    # The resumer ------------------------------------------------------------------------------

    async def resume_stream(self, session: Any, last_event_id: str) -> None:
        """Replay the events of one stream after ``Last-Event-ID``, then follow it live."""
        parsed = parse_event_id(last_event_id)
        store = get_event_store()
        if parsed is None or store is None:
            await self.refuse(Refusal("Unknown Last-Event-ID"))
            return
        self.resume_stream_id, self.resume_seq = parsed
        self.resume_session_id = session.id
        self._resume_lock = asyncio.Lock()
        async with self._resume_lock:
            # Join first: an event stored after the replay query still reaches us live.
            following = await self.join(stream_group(self.resume_stream_id))
            await self.join(session_group(session.id))
            info = await store.describe(session.id, self.resume_stream_id)
            if info is None:
                await self.refuse(Refusal("Last-Event-ID names no stream of this session"))
                return
            await self.start_sse()
            await self._replay_stored()
        if not self.connection_gone:
            self.spawn(self._watch_owner(following))

    async def _replay_stored(self) -> None:
        """Send what the store holds after the last event sent, in chunks; call with the lock held."""
        store = get_event_store()
        assert store is not None and self.resume_session_id is not None and self.resume_stream_id is not None
        while not self.connection_gone:
            events = await store.after(self.resume_session_id, self.resume_stream_id, self.resume_seq)
            if not events:
                info = await store.describe(self.resume_session_id, self.resume_stream_id)
                if info is None or info.finished:
                    # Resumed at (or after) the final event, or the stream is gone: nothing will follow.
                    await self.end_sse()
                return
            for event in events:
                await self._send_resumed(event)

    async def _send_resumed(self, event: StoredEvent) -> None:
        if event.seq <= self.resume_seq or self.connection_gone:
            return
        self.resume_seq = event.seq
        if event.message is not None:
            await self.send_sse(sse.message_event(event.message, event_id=event.event_id))
        if event.final:
            await self.end_sse()

    async def _watch_owner(self, following: bool) -> None:
        """Probe the request's worker now and then; catch up from the store; answer for a dead one."""
        interval = mcp_settings.STREAM_LIVENESS_SECONDS
        while not self.connection_gone:
            alive = await self._probe_owner(interval) if following else True
            async with self._resume_lock:
                await self._replay_stored()
                if self.connection_gone:
                    return
                if not alive:
                    await self._answer_for_dead_owner()
                    return
            await asyncio.sleep(interval)

    async def _probe_owner(self, timeout: float) -> bool:
        assert self.resume_stream_id is not None
        # The owner answers to this worker's channel, for the streams following the stream here
        # (this one is: _watch_owner probes only when its join succeeded).
        channel = await self.worker_channel()
        if channel is None:
            return True  # this request is being torn down: nobody to answer for
        self._probe_reply = asyncio.get_running_loop().create_future()
        await publish(stream_owner_group(self.resume_stream_id), {
            "type": STREAM_PROBE, "stream": self.resume_stream_id, "reply_to": channel})
        try:
            await asyncio.wait_for(asyncio.shield(self._probe_reply), timeout)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            self._probe_reply = None

    async def _answer_for_dead_owner(self) -> None:
        """The request's worker is gone and the stream unfinished: store and send an error as its end."""
        store = get_event_store()
        assert store is not None and self.resume_session_id is not None and self.resume_stream_id is not None
        info = await store.describe(self.resume_session_id, self.resume_stream_id)
        if info is None or info.finished:
            await self.end_sse()
            return
        error = jsonrpc.error_response(info.request_id, InternalError(
            "The request was interrupted: the server running it stopped, and it will not be answered. "
            "Send it again."))
        event = StoredEvent(self.resume_stream_id, self.resume_seq + 1, error, True)
        await store.append(self.resume_session_id, event)
        await self._send_resumed(event)

    async def mcp_stream_alive(self, event: dict[str, Any]) -> None:
        reply = self._probe_reply
        if event.get("stream") == self.resume_stream_id and reply is not None and not reply.done():
            reply.set_result(event.get("seq", 0))

    async def mcp_stream_event(self, event: dict[str, Any]) -> None:
        if event.get("stream") != self.resume_stream_id:
            return
        async with self._resume_lock:
            if event["seq"] > self.resume_seq + 1:
                # Events in between were stored but never reached us (sent to the dead connection
                # before the owner noticed, or dropped by a full channel): read them first.
                await self._replay_stored()
            await self._send_resumed(StoredEvent(event["stream"], event["seq"], event["message"], event["final"]))

    async def end_resumed_stream(self) -> None:
        """The session ended: a resumed stream has nothing more to wait for."""
        if self.resume_stream_id is not None and self.sse_started:
            await self.end_sse()
