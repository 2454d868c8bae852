"""
The HTTP+SSE transport of 2024-11-05 (MCP spec 2024-11-05, basic/transports#http-with-sse), for clients that still speak it.

Two endpoints. ``GET /sse`` opens a stream whose first event, ``endpoint``, names the URL to POST
to (``/messages/?session_id=<hex>``); the stream lives as long as the session. Each POST to that
URL is answered ``202 Accepted`` at once, and everything the server says — responses,
notifications, its own requests — arrives later on the stream as ``message`` events.

The POST may reach another worker than the one holding the stream: messages travel to the stream
through the session's channel-layer group, so no sticky routing is needed. Both endpoints drive
the same dispatcher as ``/mcp``.
"""

import asyncio
import weakref
from typing import Any
from urllib.parse import parse_qs

from channels.layers import get_channel_layer

from ..conf import mcp_settings
from ..hooks import McpRequest
from ..protocol import jsonrpc
from ..protocol.errors import InvalidRequest, McpError, ParseError
from ..protocol.handlers.lifecycle import handshake
from ..protocol.versions import LEGACY_VERSIONS
from ..sites import get_default_site
from ..stores.sessions import get_session_store, user_key
from ..fanout import (BROADCAST_GROUP, SSE_SEND, publish_to_session, reaches_other_workers, send_to_channel,
                      session_group)
from . import constants, sse
from .base import HttpStreamConsumer
from .http import dispatcher_for
from .http_sessions import LegacySessionMixin, refuse_duplicate_id
from .live_sessions import LiveSession, end_session, load_live_session
from .refusals import LimitExceeded, MethodNotAllowed, NotAcceptable, Refusal, SessionNotFound
from .session_cache import announce_change, session_cache
from .session_limits import check_client_state, open_session
from .stream_counts import count_streams
from .requests import initialize_context, serve_initialize, serve_request
from .visibility import may_deliver


# Session id → the stream consumer holding that session's stream on this worker: a POST served
# here hands its answers straight to it, without the channel layer.
local_streams: "weakref.WeakValueDictionary[str, LegacySseStreamConsumer]" = weakref.WeakValueDictionary()
count_streams("sse", lambda: len(local_streams))


class LegacySseStreamConsumer(LegacySessionMixin, HttpStreamConsumer):
    """``GET /sse``: opens a session and holds its stream until the client goes away."""

    site: Any = None
    messages_path: str | None = None
    transport = "http-sse"
    cors_methods = ("GET",)

    async def http_request(self, message: dict[str, Any]) -> None:
        if self.response_started:
            return
        if not await self.guard_host_and_origin():
            return
        if self.scope["method"] != "GET":
            await self.refuse(MethodNotAllowed("Method Not Allowed: open the stream with GET"),
                              headers=[(b"allow", b"GET")])
            return
        accept = self.headers.get(b"accept")
        if accept and constants.CONTENT_TYPE_SSE not in accept and "*/*" not in accept:
            await self.refuse(NotAcceptable("Not Acceptable: the stream is text/event-stream"))
            return
        if not await self.authenticate():
            return
        # The worker's channel is known before the session is made, so the session can name it:
        # answers from other workers are sent to it directly, with backpressure.
        channel = await self.worker_channel()
        await self.join(BROADCAST_GROUP)
        # The session exists from the moment the stream does (MCP spec 2024-11-05, basic/transports#http-with-sse); initialize fills it in.
        # Cached at once only where this is the one worker: elsewhere an initialize served by
        # another worker would leave this copy stale until its announcement arrived, and the
        # client's next POST may arrive here first. (The worker that serves initialize caches
        # what it stored.)
        try:
            self.session = LiveSession(await open_session(
                self.scope, self.user, transport=self.transport, protocol_version=LEGACY_VERSIONS[0],
                client_capabilities={}, client_info=None, stream_channel=channel or ""))
        except LimitExceeded as exc:
            await self.refuse(exc)
            return
        if not reaches_other_workers(get_channel_layer()):
            session_cache.put(self.session.state)
        local_streams[self.session.id] = self
        self.session_stream = True
        await self.join(session_group(self.session.id))
        await self.start_sse()
        await self.send_sse(sse.event(f"{self.endpoint_path()}?session_id={self.session.id}", event_name="endpoint"))

    def endpoint_path(self) -> str:
        path = self.messages_path or "/" + (mcp_settings.SSE_MESSAGES_PATH or "messages/").lstrip("/")
        return self.scope.get("root_path", "") + path

    async def mcp_sse_send(self, event: dict[str, Any]) -> None:
        """A message for this session, from whichever worker served the POST."""
        await self.deliver(event["message"])

    async def deliver(self, message: dict[str, Any]) -> None:
        """Send one message on the stream (answers, notifications, the server's own requests)."""
        if self.sse_started:
            await self.send_sse(sse.message_event(message, named=True))

    async def mcp_notify(self, event: dict[str, Any]) -> None:
        if await may_deliver(event, self.site or get_default_site(), user=self.user, auth=self.auth):
            await self.forward_to_session_stream(event)

    async def forward_to_session_stream(self, event: dict[str, Any]) -> None:
        if self.session_stream and self.sse_started:
            await self.send_sse(sse.shared_message_event(event, named=True))

    async def on_disconnect(self) -> None:
        # Closing the stream ends the session (MCP spec 2024-11-05, basic/transports#http-with-sse): later POSTs naming it get 404, and
        # its requests still running, on any worker, are cancelled.
        if self.session is not None:
            local_streams.pop(self.session.id, None)
            await end_session(self.session)


class LegacySseMessagesConsumer(LegacySessionMixin, HttpStreamConsumer):
    """``POST /messages/?session_id=…``: 202 at once; the answer goes out on the session's stream."""

    site: Any = None
    transport = "http-sse"
    cors_methods = ("POST",)

    def dispatcher(self) -> Any:
        return dispatcher_for(self.site or get_default_site())

    async def before_body(self) -> bool:
        if not await self.guard_host_and_origin():
            return False
        if self.scope["method"] != "POST":
            await self.refuse(MethodNotAllowed("Method Not Allowed: POST messages here"), headers=[(b"allow", b"POST")])
            return False
        return await self.authenticate()

    async def handle(self, body: bytes) -> None:
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        session_id = (query.get("session_id") or [""])[0]
        if not session_id:
            await self.refuse(Refusal("Bad Request: missing session_id"))
            return
        session = await load_live_session(session_id)
        if session is None or session.user_key != user_key(self.user) or session.transport != self.transport:
            await self.refuse(SessionNotFound())
            return
        self.session = session
        try:
            payload = jsonrpc.decode(body)
        except ParseError as exc:
            await self.send_error(400, None, exc)
            return
        try:
            messages = self.messages_of(payload, session)
        except McpError as exc:
            await self.send_error(getattr(exc, "status", 400), jsonrpc.request_id_or_none(payload), exc)
            return
        await self.send_response(202, b"Accepted", [(b"content-type", b"text/plain; charset=utf-8")])
        for message in messages:
            if not jsonrpc.is_request(message):
                await self.accept_non_request(session, message)
            elif message["method"] == "initialize":
                await self.initialize(session, message)
            else:
                try:
                    refuse_duplicate_id(session.id, message["id"])
                except McpError as exc:
                    await self.stream_message(jsonrpc.error_response(message["id"], exc))
                    continue
                # The request outlives this POST, as the stream does; the consumer lets go of what
                # its requests joined when the last of them ends.
                self.run_request(session, message, self.serve(session, message))

    def messages_of(self, payload: Any, session: LiveSession) -> list[dict[str, Any]]:
        """One message, or a batch where the session's revision allows it (2025-03-26 only)."""
        if isinstance(payload, list):
            if session.protocol_version != "2025-03-26" or not payload:
                raise InvalidRequest("Invalid Request: batches are not accepted here")
            if len(payload) > mcp_settings.MAX_BATCH_LENGTH:
                raise LimitExceeded(f"Too many messages in one batch ({len(payload)}; "
                                    f"at most {mcp_settings.MAX_BATCH_LENGTH})")
            return [jsonrpc.validate_message(message) for message in payload]
        return [jsonrpc.validate_message(payload)]

    async def stream_message(self, message: dict[str, Any]) -> None:
        """
        Everything the server says goes to the session's stream, wherever it is held: straight to
        it on this worker; to its channel on another, waiting while the channel is full rather
        than dropping the message (a group send would drop it).
        """
        assert self.session is not None
        stream = local_streams.get(self.session.id)
        if stream is not None:
            await stream.deliver(message)
            return
        event = {"type": SSE_SEND, "message": message}
        channel, group = self.session.stream_channel, session_group(self.session.id)
        if not channel or not await send_to_channel(channel, group, event):
            await publish_to_session(self.session.id, event)

    async def serve(self, session: LiveSession, message: dict[str, Any]) -> None:
        ctx = self.legacy_context(session, message)
        try:
            response = await serve_request(self.dispatcher(), message, ctx)
        except asyncio.CancelledError:
            return  # notifications/cancelled: no response (MCP spec 2024-11-05, basic/utilities/cancellation)
        await self.stream_message(response)

    async def initialize(self, session: LiveSession, message: dict[str, Any]) -> None:
        """The handshake over this transport: negotiate, remember it in the session, answer on the stream."""
        async def run(request: McpRequest) -> dict[str, Any]:
            done = handshake(self.dispatcher(), request.params, self.user)
            check_client_state(done.client_capabilities, done.client_info)
            ctx.protocol_version, ctx.client_info = done.protocol_version, done.client_info
            await get_session_store().update(session.id, protocol_version=done.protocol_version,
                                             client_capabilities=done.client_capabilities,
                                             client_info=done.client_info)
            await announce_change(session.id)
            # This worker's copy (shared with the stream, when it is held here) becomes what was just
            # stored, so the session's next POST here needs no read; other workers forget theirs.
            state = session.state
            state.protocol_version, state.client_capabilities, state.client_info = (
                done.protocol_version, done.client_capabilities, done.client_info)
            session_cache.put(state)
            return done.result

        ctx = initialize_context(message, user=self.user, auth=self.auth, transport=self.transport,
                                 **self.http_facts)
        ctx.session = session  # type: ignore[assignment]
        try:
            result = await serve_initialize(self.dispatcher(), message, ctx, run)
        except McpError as exc:
            await self.stream_message(jsonrpc.error_response(message["id"], exc))
            return
        await self.stream_message(jsonrpc.result_response(message["id"], result))
