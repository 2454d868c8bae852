"""
Legacy Streamable HTTP sessions (2025-03-26, 2025-06-18, 2025-11-25; MCP spec 2025-11-25, basic/transports#streamable-http): the
``initialize`` handshake, ``Mcp-Session-Id``, the GET stream, DELETE, batches (2025-03-26 only),
server→client requests and ``notifications/cancelled``.

Session state lives in the session store and pushes travel over the channel layer, so any worker
can serve any request of a session: the GET stream on one worker, POSTs on another.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from ..conf import mcp_settings
from ..hooks import McpNotification, McpRequest
from ..protocol import jsonrpc
from ..protocol.context import RequestContext
from ..protocol.errors import InvalidRequest, McpError
from ..protocol.handlers.lifecycle import handshake
from ..protocol.input import wait_for_client_answer
from ..protocol.versions import LEGACY_VERSIONS, Era
from ..stores.sessions import get_session_store, user_key
from ..fanout import (
    BROADCAST_GROUP,
    cancel_request,
    cancel_session_requests,
    deliver_client_response,
    in_flight,
    key,
    pending_client_requests,
    resource_group,
    session_group,
)
from . import constants, sse
from .credential_watch import unwatch
from .refusals import LimitExceeded, MethodNotAllowed, MissingSessionId, NotAcceptable, SessionNotFound
from .live_sessions import LiveSession, end_session, load_live_session, reread_session
from .session_cache import session_cache
from .session_limits import admit_stream, check_client_state, check_pending_requests, open_session, release_stream
from .request_tracking import RequestTrackingMixin, refuse_duplicate_id
from .requests import initialize_context, serve_initialize, serve_notification, serve_request


logger = logging.getLogger("django_mcp.transports")

class LegacySessionMixin(RequestTrackingMixin):
    """The session-bound half of :class:`~django_mcp.transports.http.McpHttpConsumer`."""

    session: LiveSession | None = None
    #: See :attr:`~django_mcp.transports.http.McpHttpConsumer.pushes`.
    pushes = True
    allow_header: list[tuple[bytes, bytes]]
    session_stream = False
    resumable = False
    stream_admitted = False
    _last_touch = 0.0

    @property
    def connection_gone(self) -> bool:
        """The HTTP exchange is over (the client left, or the response was sent); requests may still run."""
        return self.disconnected or self.response_ended

    async def handle_initialize(self, message: dict[str, Any]) -> None:
        request_id = jsonrpc.request_id_or_none(message)
        try:
            jsonrpc.validate_message(message)
            if not jsonrpc.is_request(message):
                raise InvalidRequest("Invalid Request: initialize must be a request")
            opened: list[Any] = []

            async def run(request: McpRequest) -> dict[str, Any]:
                done = handshake(self.dispatcher(), request.params, self.user, pushes=self.pushes)
                check_client_state(done.client_capabilities, done.client_info)
                ctx.protocol_version, ctx.client_info = done.protocol_version, done.client_info
                opened.append(await open_session(
                    self.scope, self.user, transport=self.transport, protocol_version=done.protocol_version,
                    client_capabilities=done.client_capabilities, client_info=done.client_info))
                ctx.session = opened[0]
                return done.result

            ctx = initialize_context(message, user=self.user, auth=self.auth, transport=self.transport,
                                     pushes=self.pushes, **self.http_facts)
            result = await serve_initialize(self.dispatcher(), message, ctx, run)
            session = opened[0]
        except LimitExceeded as exc:
            await self.refuse(exc, request_id)
            return
        except McpError as exc:
            await self.send_error(400, request_id, exc)
            return
        session_cache.put(session)
        await self.send_json(200, jsonrpc.result_response(request_id, result),
                             [(constants.MCP_SESSION_ID, session.wire_id.encode())])

    async def load_session(self, request_id: Any = None) -> LiveSession | None:
        """The session named by ``Mcp-Session-Id``; sends 400 or 404 and returns None otherwise."""
        session_id = self.headers.get(constants.MCP_SESSION_ID)
        if not session_id:
            await self.refuse(MissingSessionId(), request_id)
            return None
        session = await load_live_session(session_id.strip())
        # A session id is not a credential: another principal using it finds nothing (MCP security best practices).
        if session is None or session.user_key != user_key(self.user) or session.transport != self.transport:
            await self.refuse(SessionNotFound(), request_id)
            return None
        version = self.headers.get(constants.MCP_PROTOCOL_VERSION)
        if version is not None and version.strip() not in LEGACY_VERSIONS:
            await self.send_error(400, request_id, InvalidRequest(
                f"Bad Request: unsupported MCP-Protocol-Version {version.strip()!r}"))
            return None
        self.session = session
        return session

    async def handle_legacy(self, message: dict[str, Any]) -> None:
        request_id = jsonrpc.request_id_or_none(message)
        try:
            jsonrpc.validate_message(message)
        except McpError as exc:
            await self.send_error(400, request_id, exc)
            return
        session = await self.load_session(request_id)
        if session is None:
            return
        if not jsonrpc.is_request(message):
            await self.accept_non_request(session, message)
            await self.send_response(202)
            return
        try:
            refuse_duplicate_id(session.id, message["id"])
        except McpError as exc:
            await self.send_error(400, request_id, exc)
            return
        if self.pushes:  # an endpoint that only answers has no stream to resume
            self.make_resumable(session, message["id"])
        # Disconnecting does not cancel a legacy request (MCP spec 2025-11-25, basic/utilities/cancellation):
        # the task outlives the connection, and the consumer lets go of what it joined when the last
        # of its requests ends.
        self.run_request(session, message, self.answer(message, self.legacy_context(session, message), Era.LEGACY))

    async def cleanup(self) -> None:
        """
        When the connection ends while requests of it still run, keep the channel-layer groups they
        need (cancellations, client answers, resumers' probes); the last request to end lets go.
        """
        if self.stream_admitted and self.session is not None:
            self.stream_admitted = False
            release_stream(self.session.id)
        if self.requests_running:
            unwatch(self)
            self.finished.set()
            timer = getattr(self, "_keepalive_timer", None)
            if timer is not None:
                timer.cancel()
            for task in list(self.background):
                task.cancel()
            return
        await super().cleanup()

    async def handle_legacy_batch(self, batch: list[Any]) -> None:
        """2025-03-26 only: a batch of requests and notifications, or of responses (MCP spec 2026-07-28, basic#messages)."""
        session = await self.load_session()
        if session is None:
            return
        if session.protocol_version != "2025-03-26":
            await self.send_error(400, None, InvalidRequest("Invalid Request: batches are not part of protocol "
                                                            f"{session.protocol_version}"))
            return
        if not batch:
            await self.send_error(400, None, InvalidRequest("Invalid Request: empty batch"))
            return
        if len(batch) > mcp_settings.MAX_BATCH_LENGTH:
            await self.refuse(LimitExceeded(f"Too many messages in one batch ({len(batch)}; "
                                            f"at most {mcp_settings.MAX_BATCH_LENGTH})"))
            return
        tasks: list[asyncio.Future[Any]] = []
        for message in batch:
            try:
                jsonrpc.validate_message(message)
                if message.get("method") == "initialize":
                    raise InvalidRequest("Invalid Request: initialize cannot be batched")
                if jsonrpc.is_request(message):
                    refuse_duplicate_id(session.id, message["id"])
            except McpError as exc:
                tasks.append(_done(jsonrpc.error_response(jsonrpc.request_id_or_none(message), exc)))
                continue
            if jsonrpc.is_request(message):
                tasks.append(self.start_request(session, message))
            else:
                await self.accept_non_request(session, message)
        if not tasks:
            await self.send_response(202)
            return
        self.spawn(self.respond(tasks, Era.LEGACY, batch=True))

    async def accept_non_request(self, session: LiveSession, message: dict[str, Any]) -> None:
        """Notifications and the client's answers to our requests; both get 202."""
        if jsonrpc.is_response(message):
            await deliver_client_response(session.id, message)
            return
        ctx = RequestContext.for_legacy(session, message, user=self.user, auth=self.auth, transport=self.transport,
                                        pushes=self.pushes, **self.http_facts)
        await serve_notification(self.dispatcher(), message, ctx, _act_on_notification)

    def legacy_context(self, session: LiveSession, message: dict[str, Any]) -> RequestContext:
        if not self.pushes:
            # Answers only: no progress, log message or question to the client can reach it.
            return RequestContext.for_legacy(session, message, user=self.user, auth=self.auth,
                                             transport=self.transport, pushes=False, **self.http_facts)
        return RequestContext.for_legacy(session, message, user=self.user, auth=self.auth,
                                         send_message=self.stream_message,
                                         send_request=self.send_client_request,
                                         close_stream=self.close_stream if self.resumable else None,
                                         transport=self.transport, **self.http_facts)

    def start_request(self, session: LiveSession, message: dict[str, Any]) -> asyncio.Future[Any]:
        """Run one request of a batch; the batch's responder sends every answer together."""
        ctx = self.legacy_context(session, message)
        return asyncio.shield(self.run_request(session, message, serve_request(self.dispatcher(), message, ctx)))

    async def send_client_request(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """Ask the legacy client (sampling, elicitation, roots) on this request's stream and wait."""
        session = self.session
        assert session is not None
        check_pending_requests(session.id, pending_client_requests)
        request_id = f"srv-{uuid.uuid4().hex}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        slot = (session.id, key(request_id))
        pending_client_requests[slot] = future
        try:
            # The answer is POSTed separately and may reach another worker, which relays it here.
            await self.join(session_group(session.id))
            await self.stream_message(jsonrpc.request(request_id, method, params))
            return await wait_for_client_answer(future, method, mcp_settings.CLIENT_REQUEST_TIMEOUT_SECONDS)
        finally:
            pending_client_requests.pop(slot, None)

    # GET stream and DELETE ------------------------------------------------------------------

    async def handle_get(self) -> None:
        """The session's standalone stream for notifications unrelated to a request (MCP spec 2025-11-25, basic/transports#streamable-http)."""
        if not self.pushes:
            # A server that offers no stream answers GET with 405 (MCP spec 2025-11-25,
            # basic/transports#listening-for-messages-from-the-server).
            await self.refuse(MethodNotAllowed("Method Not Allowed: this endpoint holds no stream open"),
                              headers=self.allow_header)
            return
        if not self.headers.get(constants.MCP_SESSION_ID):
            # No session: nothing to stream. 2026-07-28 clients get the 405 the spec asks for.
            await self.refuse(MethodNotAllowed("Method Not Allowed: GET needs a session"),
                              headers=self.allow_header)
            return
        if constants.CONTENT_TYPE_SSE not in (self.headers.get(b"accept") or "") and "*/*" not in (
                self.headers.get(b"accept") or ""):
            await self.refuse(NotAcceptable("Not Acceptable: GET needs Accept: text/event-stream"))
            return
        session = await self.load_session()
        if session is None:
            return
        last_event_id = self.headers.get(constants.LAST_EVENT_ID)
        if last_event_id:
            # The events replayed are rows that refer to the session's: it must have one.
            if not await session.persist():
                await self.refuse(SessionNotFound())
                return
            await self.resume_stream(session, last_event_id)
            return
        try:
            admit_stream(session.id)
        except LimitExceeded as exc:
            await self.refuse(exc)
            return
        self.stream_admitted = self.session_stream = True
        await self.join(session_group(session.id))
        await self.join(BROADCAST_GROUP)
        # Read the subscriptions again, from the store, now that the stream is in the session's
        # group: a resources/subscribe (or a DELETE) that committed after load_session() above
        # told the session group before this stream was in it. From here on nothing is missed.
        # A session whose row this worker still owes is read from what it owes (or from its
        # signed id): the stream does not write the row ahead of the batch (stores/pending_rows.py),
        # which a thousand clients reconnecting at once would otherwise each do alone.
        current = await reread_session(session.wire_id)
        if current is None:
            await self.refuse(SessionNotFound())
            return
        for uri in current.subscriptions:
            await self.join(resource_group(uri))
        await self.start_sse()
        await self.send_sse(sse.keepalive())

    async def handle_delete(self) -> None:
        """End a session (MCP spec 2025-11-25, basic/transports#streamable-http); later requests naming it get 404."""
        if not self.headers.get(constants.MCP_SESSION_ID):
            await self.refuse(MethodNotAllowed("Method Not Allowed: DELETE needs a session"),
                              headers=self.allow_header)
            return
        session = await self.load_session()
        if session is None:
            return
        await end_session(session)
        await self.send_response(200)

    async def forward_to_session_stream(self, event: dict[str, Any]) -> None:
        if self.session_stream and self.sse_started:
            await self.send_sse(sse.shared_message_event(event))

    # Channel events ----------------------------------------------------------------------------

    async def mcp_client_response(self, event: dict[str, Any]) -> None:
        message = event["message"]
        if self.session is not None:
            future = pending_client_requests.get((self.session.id, key(message.get("id"))))
            if future is not None and not future.done():
                future.set_result(message)

    async def mcp_cancel(self, event: dict[str, Any]) -> None:
        if self.session is not None:
            task = in_flight.get((self.session.id, key(event.get("request_id"))))
            if task is not None:
                task.cancel()

    async def mcp_subscribe(self, event: dict[str, Any]) -> None:
        if self.session_stream:
            if event.get("subscribe"):
                await self.join(resource_group(event["uri"]))
            else:
                await self.leave(resource_group(event["uri"]))

    async def mcp_session_closed(self, event: dict[str, Any]) -> None:
        """The session ended (DELETE, or its HTTP+SSE stream closed): so do its streams and requests."""
        if self.session is not None:
            cancel_session_requests(self.session.id)
        if self.session_stream and self.sse_started:
            await self.end_sse()

    async def on_keepalive(self) -> None:
        """An open stream keeps its session alive, and ends when the session is gone."""
        if not self.session_stream or self.session is None:
            return
        loop = asyncio.get_running_loop()
        if not self.session.state.stored:
            # The stream opened without writing the session's row (handle_get): the batch of the
            # worker that opened it has written it by the first keep-alive, unless that worker
            # stopped first. Then write it here, long before its signed id stops standing for it
            # alone (SIGNED_ONLY_SECONDS); a new row is a touch.
            self._last_touch = loop.time()
            if not await self.session.persist():
                await self.end_sse()
            return
        if not self._last_touch:
            # The stream's opening wrote or read the row (a read touches a row a minute old): the
            # clock starts at the first keep-alive, instead of a write per stream then, thousands
            # at once after a restart's reconnections.
            self._last_touch = loop.time()
            return
        interval = min(3600.0, mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS / 4)
        if loop.time() - self._last_touch < interval:
            return
        self._last_touch = loop.time()
        if not await get_session_store().touch(self.session.id):
            await self.end_sse()


def _done(value: Any) -> asyncio.Future[Any]:
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    future.set_result(value)
    return future


async def _act_on_notification(notification: McpNotification) -> None:
    """What a legacy session's notification does: ``notifications/cancelled`` cancels its request."""
    if notification.method == "notifications/cancelled":
        params = notification.params if isinstance(notification.params, dict) else {}
        request_id = params.get("requestId")
        session = notification.request.session
        if request_id is not None and session is not None:
            await cancel_request(session.id, request_id)


__all__ = ["LegacySessionMixin", "LiveSession", "end_session", "load_live_session", "refuse_duplicate_id"]
