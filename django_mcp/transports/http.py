"""
The Streamable HTTP endpoint (default ``/mcp``), serving every protocol revision at one URL.

Each POST is routed by how the client speaks (MCP spec 2026-07-28, basic/versioning#backward-compatibility-with-initialization-based-versions): ``initialize`` starts a legacy
session; a request whose ``params._meta`` names a protocol version is served statelessly under
2026-07-28; anything else belongs to the legacy session named by ``Mcp-Session-Id``. Answers go
back as plain JSON unless the handler sends something first (progress, a log message, a request
to a legacy client), in which case the response turns into an SSE stream on the spot.
"""

import asyncio
import logging
from typing import Any

from django.core.signals import setting_changed

from ..conf import mcp_settings
from ..protocol import jsonrpc
from ..protocol.context import RequestContext
from ..protocol.dispatcher import Dispatcher
from ..protocol.errors import HeaderMismatch, InvalidParams, InvalidRequest, McpError, ParseError
from ..protocol.extensions import extension_listen_groups, extension_listen_wants
from ..protocol.envelope import modern_version_of, read_envelope
from ..protocol.versions import MODERN_VERSIONS, Era
from ..request_state import SignedStateCodec
from ..sites import get_default_site
from ..fanout import BROADCAST_GROUP, NOTIFY, resource_group
from . import constants, headers as mirrored_headers, sse
from .base import HttpStreamConsumer
from .http_sessions import LegacySessionMixin
from .resumable import ResumableStreamMixin
from .refusals import MethodNotAllowed, NotAcceptable, UnsupportedMediaType
from .security import accepts, media_types
from .status import status_for_error
from .stream_counts import count_streams
from .visibility import may_deliver
from .requests import serve_notification, serve_request


logger = logging.getLogger("django_mcp.transports")

ALLOW = [(b"allow", b"GET, POST, DELETE")]
ALLOW_ANSWERS_ONLY = [(b"allow", b"POST, DELETE")]

# subscriptions/listen streams open on this worker (stream_counts.py).
_listening = [0]
count_streams("listen", lambda: _listening[0])

# One dispatcher per site, rebuilt when settings change (tests override them).
_dispatchers: dict[int, Dispatcher] = {}


def dispatcher_for(site: Any) -> Dispatcher:
    dispatcher = _dispatchers.get(id(site))
    if dispatcher is None or dispatcher.backend is not site:
        dispatcher = _dispatchers[id(site)] = Dispatcher(
            site, state_codec=SignedStateCodec(), list_ttl_ms=mcp_settings.LIST_TTL_MS)
    return dispatcher


def check_listen_size(params: Any) -> None:
    """
    Refuse a ``subscriptions/listen`` naming more resources than ``MAX_SUBSCRIPTIONS``, before
    anything is looked up or joined for them (each URI costs a permission check and a group).
    """
    notifications = params.get("notifications") if isinstance(params, dict) else None
    uris = notifications.get("resourceSubscriptions") if isinstance(notifications, dict) else None
    if isinstance(uris, list) and len(uris) > mcp_settings.MAX_SUBSCRIPTIONS:
        raise InvalidParams(f"Too many resource subscriptions ({len(uris)}; at most {mcp_settings.MAX_SUBSCRIPTIONS})")


def _forget_dispatchers(**kwargs: Any) -> None:
    _dispatchers.clear()


setting_changed.connect(_forget_dispatchers)


class McpHttpConsumer(LegacySessionMixin, ResumableStreamMixin, HttpStreamConsumer):
    """
    The MCP endpoint as a Channels consumer. Mount it with :func:`django_mcp.asgi.application`, or
    in your own router as ``McpHttpConsumer.as_asgi()`` (``site=`` picks another :class:`~django_mcp.McpSite`).
    """

    site: Any = None
    #: Whether this endpoint can send more than one answer per request: SSE responses carrying
    #: progress, log messages and legacy server requests, a session's GET stream and
    #: ``subscriptions/listen``. False for the plain Django view under WSGI
    #: (:mod:`django_mcp.views`), which answers each POST with one JSON body and refuses GET.
    pushes = True

    @property
    def allow_header(self) -> list[tuple[bytes, bytes]]:
        """The ``Allow`` header of a 405: what this endpoint serves."""
        return ALLOW if self.pushes else ALLOW_ANSWERS_ONLY

    # Entry -------------------------------------------------------------------------------------

    async def before_body(self) -> bool:
        if not await self.guard_host_and_origin():
            return False
        method = self.scope["method"]
        if method not in ("GET", "POST", "DELETE"):
            await self.refuse(MethodNotAllowed(f"Method {method} not allowed"), headers=self.allow_header)
            return False
        if method == "POST":
            if constants.CONTENT_TYPE_JSON not in media_types(self.headers.get(b"content-type")):
                await self.refuse(UnsupportedMediaType())
                return False
            accept = self.headers.get(b"accept")
            if not (accepts(accept, constants.CONTENT_TYPE_JSON) and accepts(accept, constants.CONTENT_TYPE_SSE)):
                await self.refuse(NotAcceptable("Not Acceptable: Accept must list application/json and "
                                                "text/event-stream"))
                return False
            length = self.headers.get(b"content-length")
            if length and length.isdigit() and int(length) > mcp_settings.MAX_REQUEST_BODY_SIZE:
                await self.refuse_too_large()
                return False
        # The cheap header checks first; authentication may query the database.
        return await self.authenticate()

    async def http_request(self, message: dict[str, Any]) -> None:
        # GET and DELETE have no body worth reading; their checks run on the first event.
        if self.scope["method"] != "POST" and not self.response_started and not self.body_done:
            self.body_done = True
            if await self.before_body():
                await (self.handle_get() if self.scope["method"] == "GET" else self.handle_delete())
            return
        await super().http_request(message)

    def dispatcher(self) -> Dispatcher:
        return dispatcher_for(self.site or get_default_site())

    async def handle(self, body: bytes) -> None:
        try:
            payload = jsonrpc.decode(body)
        except ParseError as exc:
            await self.send_error(400, None, exc)
            return
        if isinstance(payload, list):
            await self.handle_legacy_batch(payload)
            return
        if not isinstance(payload, dict):
            await self.send_error(400, None, InvalidRequest("Invalid Request: the body must be a JSON-RPC object"))
            return
        conflicting = sorted(name.decode("latin-1") for name in self.conflicting_headers if name.startswith(b"mcp-"))
        if conflicting:
            # Two different values of a mirrored header: a proxy reading the first and the server
            # the last would disagree about the request (MCP spec 2026-07-28, basic/transports/streamable-http; MCP security best practices).
            await self.send_error(400, jsonrpc.request_id_or_none(payload),
                                  HeaderMismatch(f"Conflicting values of the {conflicting[0]} header"))
            return
        # Modern markers win over the method name: a 2026-07-28 client sending `initialize` must
        # get the removed method's 404, not a legacy handshake (MCP spec 2026-07-28, basic/transports/streamable-http; MCP spec 2026-07-28, basic/versioning#backward-compatibility-with-initialization-based-versions).
        if modern_version_of(payload) is not None or self.headers.get(
                constants.MCP_PROTOCOL_VERSION, "").strip() in MODERN_VERSIONS:
            await self.handle_modern(payload)
        elif payload.get("method") == "initialize":
            await self.handle_initialize(payload)
        else:
            await self.handle_legacy(payload)

    # 2026-07-28 -----------------------------------------------------------------------------

    async def handle_modern(self, message: dict[str, Any]) -> None:
        """A stateless request (MCP spec 2026-07-28, basic/transports/streamable-http): validate envelope and headers, serve, never remember."""
        request_id = jsonrpc.request_id_or_none(message)
        try:
            jsonrpc.validate_message(message)
            if jsonrpc.is_response(message):
                raise InvalidRequest("Invalid Request: clients do not send responses in 2026-07-28")
            if jsonrpc.is_notification(message):
                # No client notification is defined over 2026 HTTP; accept and ignore (MCP spec 2026-07-28,
                # basic/transports/streamable-http) — after the hooks around notifications saw it.
                version = modern_version_of(message) or MODERN_VERSIONS[-1]
                await serve_notification(self.dispatcher(), message, RequestContext(
                    era=Era.MODERN, protocol_version=version, user=self.user, auth=self.auth,
                    method=message["method"], params=message.get("params"), transport=self.transport,
                    pushes=self.pushes, **self.http_facts))
                await self.send_response(202)
                return
            header_version = self.headers.get(constants.MCP_PROTOCOL_VERSION)
            body_version = modern_version_of(message)
            if header_version is not None and body_version is not None and header_version.strip() != body_version:
                # A disagreement is a header mismatch before it is a version question (MCP spec 2026-07-28, basic/transports/streamable-http).
                raise HeaderMismatch("MCP-Protocol-Version header does not match _meta protocolVersion")
            envelope = read_envelope(message.get("params"))
            mirrored_headers.validate(self.headers, message, envelope.protocol_version)
            pushes = self.pushes
            ctx = RequestContext.for_modern(envelope, message, user=self.user, auth=self.auth,
                                            send_message=self.stream_message if pushes else None,
                                            listen=self.listen if pushes else None,
                                            transport=self.transport, pushes=pushes, **self.http_facts)
            if message["method"] == "subscriptions/listen":
                check_listen_size(message.get("params"))
            if message["method"] == "tools/call":
                # Only a tool this request may call has its Mcp-Param-* headers checked: a hidden
                # one must not be told apart from one that does not exist.
                params = message.get("params") or {}
                schema = await self.dispatcher().backend.tool_input_schema(str(params.get("name")), ctx)
                mirrored_headers.validate_params(self.headers, params.get("arguments"), schema or {})
        except McpError as exc:
            await self.send_error(status_for_error(exc.code, Era.MODERN), request_id, exc)
            return
        # Closing the response stream cancels the request (MCP spec 2026-07-28, basic/transports/streamable-http): the task is the consumer's.
        self.spawn(self.answer(message, ctx, Era.MODERN))

    async def listen(self, honoured: dict[str, Any]) -> Any:
        """Join the groups a ``subscriptions/listen`` filter needs; return the notification iterator."""

        self.listen_filter = honoured
        self.listen_queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.listen_overflowed = False
        if any(honoured.get(flag) for flag in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")):
            await self.join(BROADCAST_GROUP)
        for uri in honoured.get("resourceSubscriptions", []):
            await self.join(resource_group(uri))
        for group in extension_listen_groups(honoured):
            await self.join(group)
        return self._listen_iterator()

    async def _listen_iterator(self) -> Any:
        _listening[0] += 1
        queue = self.listen_queue
        try:
            while True:
                if self._held_sse is not None and queue.empty():
                    await self.flush_sse()  # nothing more waiting: out with what was held
                message = await queue.get()
                if message is None:
                    break
                if not queue.empty():
                    self.hold_sse()  # more waiting behind this one: their events go out together
                yield message
        finally:
            _listening[0] -= 1

    def queue_for_listener(self, message: dict[str, Any]) -> None:
        """
        Queue a notification for the listen stream. A reader so far behind that
        ``STREAM_QUEUE_SIZE`` notifications wait ends its subscription instead of growing the
        queue: the client sees the stream end, listens again and re-reads what it cares about.
        """
        if self.listen_overflowed:
            return
        if self.listen_queue.qsize() >= mcp_settings.STREAM_QUEUE_SIZE:
            self.listen_overflowed = True
            logger.warning("A subscriptions/listen reader fell %d notifications behind; ending its stream",
                           mcp_settings.STREAM_QUEUE_SIZE)
            self.listen_queue.put_nowait(None)
            return
        self.listen_queue.put_nowait(message)

    # Responses --------------------------------------------------------------------------------

    async def stream_message(self, message: dict[str, Any]) -> None:
        """Send a request-scoped message, turning the response into an SSE stream if need be."""
        if self.resumable:
            await self.emit_resumable(message)
            return
        if self.connection_gone:
            return
        if not self.sse_started:
            await self.start_sse(self.response_headers())
        await self.send_sse(sse.message_event(message))

    def response_headers(self) -> list[tuple[bytes, bytes]]:
        return []

    async def answer(self, message: dict[str, Any], ctx: RequestContext, era: Era) -> None:
        """Serve one request and send its answer, all in one task (no second task per request)."""
        try:
            response = await serve_request(self.dispatcher(), message, ctx)
        except asyncio.CancelledError:
            if era is Era.LEGACY and self.resumable and self.stream_id is not None:
                # Resumers must learn the stream is over, whichever connection they are on.
                await self.end_cancelled_stream()
                return
            if era is Era.LEGACY and not self.connection_gone:
                # notifications/cancelled (a legacy task is never cancelled by a disconnect).
                await self.send_answers([], era)
                return
            raise
        try:
            if ctx.scope_challenge and "error" in response and not self.sse_started and not self.connection_gone:
                await self.refuse_for_scope(response, ctx.scope_challenge)
                return
            await self.send_answers([response], era)
        except Exception as exc:
            # Sending needs the store or the channel layer (resumable streams): if they are away,
            # the client must still not be left waiting.
            await self.fail(exc)

    async def respond(self, tasks: list[asyncio.Future[Any]], era: Era, *, batch: bool = False) -> None:
        """
        Wait for several answers (a 2025-03-26 batch) and send them together. A request cancelled
        by ``notifications/cancelled`` has no answer (MCP spec 2025-03-26, basic/utilities/cancellation):
        only its entry is left out, the others are still sent.
        """
        responses = []
        for task in tasks:
            try:
                responses.append(await task)
            except asyncio.CancelledError:
                if asyncio.current_task().cancelling():
                    # This responder itself is being torn down: let the requests know.
                    for other in tasks:
                        other.cancel()
                    raise
        await self.send_answers(responses, era, batch=batch)

    async def send_answers(self, responses: list[dict[str, Any]], era: Era, *, batch: bool = False) -> None:
        """Send answers: as JSON if nothing streamed yet, else as SSE events (resumable ones stored)."""
        if self.resumable and len(responses) == 1 and (self.sse_started or self.connection_gone):
            await self.emit_resumable(responses[0], final=True)
            await self.end_sse()
            return
        if self.connection_gone:
            return
        if not responses:
            # Cancelled by notifications/cancelled: no response is sent (MCP spec 2026-07-28, basic/patterns/cancellation), but the
            # HTTP exchange still ends, as an SSE stream that carried nothing more.
            if not self.sse_started:
                await self.start_sse(self.response_headers())
            await self.end_sse()
            return
        if self.sse_started:
            for response in responses:
                await self.send_sse(sse.message_event(response))
            await self.end_sse()
            return
        if batch:
            await self.send_json(200, responses, self.response_headers())
            return
        response = responses[0]
        status = status_for_error(response["error"]["code"], era) if "error" in response else 200
        await self.send_json(status, response, self.response_headers())

    # Channel events ----------------------------------------------------------------------------

    def take_at_once(self, event: dict[str, Any]) -> bool:
        """
        A notification for a listen stream that nobody's permission decides goes straight to its
        queue: the stream's own task writes it, so a hand-over task per stream per notification
        would be one more task for nothing (a thousand listeners, a thousand tasks).
        """
        if event.get("type") != NOTIFY or event.get("visibility") or getattr(self, "listen_queue", None) is None:
            return False
        if self._listen_wants(event):
            self.queue_for_listener(event["message"])
        return True

    async def mcp_notify(self, event: dict[str, Any]) -> None:
        """A change notification from any worker, for a listen stream or a session's GET stream."""
        queue = getattr(self, "listen_queue", None)
        if queue is not None:
            if self._listen_wants(event) and await self.may_deliver(event):
                self.queue_for_listener(event["message"])
            return
        if await self.may_deliver(event):
            await self.forward_to_session_stream(event)

    async def mcp_session_closed(self, event: dict[str, Any]) -> None:
        await super().mcp_session_closed(event)
        await self.end_resumed_stream()

    async def may_deliver(self, event: dict[str, Any]) -> bool:
        if not event.get("visibility"):  # most events: no rule, and no dispatcher to look up
            return True
        return await may_deliver(event, self.dispatcher().backend, user=self.user, auth=self.auth)

    def _listen_wants(self, event: dict[str, Any]) -> bool:
        wanted = getattr(self, "listen_filter", {})
        kind = event.get("kind")
        if kind == "resource":
            return event.get("uri") in wanted.get("resourceSubscriptions", [])
        if kind in ("tools", "prompts", "resources"):
            return bool(wanted.get(f"{kind}ListChanged"))
        return extension_listen_wants(event, wanted)


class AnswersOnlyMcpConsumer(McpHttpConsumer):
    """
    The MCP endpoint where no stream can be held open — the plain Django view under a WSGI
    server (:mod:`django_mcp.views`): every POST gets one JSON answer, GET gets 405, and no
    capability that promises notifications is announced (:attr:`McpHttpConsumer.pushes`).
    """

    pushes = False
    cors_methods = ("POST", "DELETE")
