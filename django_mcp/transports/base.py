"""
ASGI plumbing shared by the HTTP consumers: reading the body with a size limit, Host and Origin
checks, CORS preflights, the request's tasks and its teardown. Writing the response is
``responding.py``'s, authentication ``authenticating.py``'s, and the channel-layer reader, started
only when a request needs server pushes, ``channel_membership.py``'s.

Built on Channels' ``AsyncConsumer`` rather than ``AsyncHttpConsumer``, which stops as soon as
``handle()`` returns and so cannot hold a stream open for channel-layer events (Channels issues
#1747, #1302). Two further departures from ``AsyncConsumer``, both for speed (docs/architecture.md, "Performance"):
``dispatch`` does not hop to a thread to close old database connections on every message (code
that touches the ORM does so through ``database_sync_to_async``, which closes them itself), and no
channel is opened for requests that never need one.
"""

import asyncio
import inspect
import logging
import sys
from typing import Any

from channels.consumer import AsyncConsumer, get_handler_name
from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer

from ..conf import mcp_settings
from ..protocol.errors import InternalError
from . import cors
from .authenticating import AuthenticatingMixin
from .channel_membership import ChannelMembershipMixin
from .credential_watch import lapsed, unwatch, watch, watched_user
from .outages import RETRY_AFTER_SECONDS, is_outage
from .refusals import ForbiddenOrigin, MisdirectedHost, PayloadTooLarge, Refusal
from .responding import RespondingMixin
from .security import host_is_allowed, origin_is_allowed


# asyncio.Task(..., eager_start=True) exists from Python 3.12.
EAGER_TASKS = sys.version_info >= (3, 12)

logger = logging.getLogger("django_mcp.transports")



# The handler names of the ASGI events every request receives, as Channels' get_handler_name()
# spells them; other types (channel-layer events) go through it.
_HANDLER_NAMES = {"http.request": "http_request", "http.disconnect": "http_disconnect"}


class _Finished:
    """Set once the response is complete: an event whose future the serve loop can wait on."""

    __slots__ = ("future",)  # one per request, and per open stream for as long as it is open

    def __init__(self) -> None:
        self.future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def set(self) -> None:
        if not self.future.done():
            self.future.set_result(None)

    def is_set(self) -> bool:
        return self.future.done()


class HttpStreamConsumer(AuthenticatingMixin, ChannelMembershipMixin, RespondingMixin, AsyncConsumer):
    """One HTTP request: a body in; a JSON response or an SSE stream out; channel events on demand."""

    #: Which transport this is (``streamable-http``, ``http-sse``), for sessions and authentication.
    transport = "streamable-http"
    #: Authentication classes; None means ``DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]``. Set per
    #: endpoint with ``as_asgi(authentication_classes=[...])``.
    authentication_classes: Any = None
    #: Methods a CORS preflight is told this endpoint serves.
    cors_methods: tuple[str, ...] = ("GET", "POST", "DELETE")
    #: CORS headers for this request's responses; set only for an allowed cross-origin page, so a
    #: request without ``Origin`` pays nothing for CORS.
    cors_headers: list[tuple[bytes, bytes]] | None = None

    # Per-request state that starts the same for every request lives here, on the class, and is
    # set on the instance only once it changes: a request then writes fewer attributes, and a
    # consumer's __dict__ stays within the keys CPython shares between instances of a class (30;
    # past that every instance pays for a dict of its own, about 1.5 KiB per open stream).
    user: Any = None
    auth: Any = None
    body_done = False
    response_started = False
    response_ended = False
    sse_started = False
    disconnected = False
    #: Header names sent more than once with different values: a proxy reading the first and the
    #: server the last would disagree about the request (MCP spec 2026-07-28,
    #: basic/transports/streamable-http; MCP security best practices). A set once there is one.
    conflicting_headers: "frozenset[bytes] | set[bytes]" = frozenset()
    #: Channel-layer groups joined, and tasks owned by the request: a set once there is one.
    groups: "frozenset[str] | set[str]" = frozenset()
    background: "frozenset[asyncio.Task[Any]] | set[asyncio.Task[Any]]" = frozenset()
    #: The request body read so far: a bytearray once a chunk of it has arrived (a GET has none).
    body: "bytes | bytearray" = b""

    #: The attributes a request sets on its consumer, the commonest first: see
    #: :meth:`__init_subclass__`. At most 30 count (CPython's limit for shared keys).
    instance_attributes: tuple[str, ...] = (
        "site", "authentication_classes", "scope", "base_send", "channel_layer", "headers", "finished",
        "_send_lock", "user", "auth", "body", "body_done", "response_started", "response_ended", "background",
        "session", "requests_running", "resumable", "stream_request_id", "disconnected", "stream_admitted",
        "session_stream", "sse_started", "shared_inbox", "groups", "_keepalive_timer", "_left_for_good",
        "cors_headers", "conflicting_headers", "_held_sse")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """
        Give the class's instances room for every attribute a request may set. CPython keeps an
        instance's attributes in a small array whose keys all instances of the class share, and
        each new instance takes away room for keys not seen yet: once a few dozen requests have
        run, a request setting an attribute none set before (a GET stream's, after POSTs) has its
        attributes copied into a dict of its own, about 0.6 KiB more for as long as the stream
        stays open. One instance made here, that sets them all before any request, prevents that.
        """
        super().__init_subclass__(**kwargs)
        primer = object.__new__(cls)
        for name in cls.instance_attributes:
            if not hasattr(inspect.getattr_static(cls, name, None), "__set__"):  # not a property
                setattr(primer, name, None)

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scope = scope
        self.base_send = send
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        raw_headers = scope.get("headers") or ()
        if not isinstance(raw_headers, (list, tuple)):  # ASGI allows any iterable
            raw_headers = list(raw_headers)
        # The last value of each name; a name sent twice is looked at again only when the count
        # says there is one (a comprehension costs half the loop that checks every header).
        headers = {name.lower(): value.decode("latin-1") for name, value in raw_headers}
        if len(headers) != len(raw_headers):
            self.note_conflicting_headers(raw_headers)
        self.headers = headers
        # What a request's context carries of the HTTP exchange, for hooks (RequestContext).
        self.http_facts = {"http_headers": headers, "client_address": scope.get("client"),
                           "http_version": scope.get("http_version")}
        self.finished = _Finished()
        self._send_lock = asyncio.Lock()
        try:
            # The method test first, so other requests pay nothing more for CORS. A preflight is
            # answered before authentication and without reading the body (Fetch, CORS-preflight request).
            if scope["method"] == "OPTIONS" and cors.is_preflight(scope["method"], self.headers):
                await self.answer_preflight()
            else:
                await self._serve(receive)
        except StopConsumer:
            pass
        finally:
            await self.cleanup()

    def note_conflicting_headers(self, raw_headers: Any) -> None:
        """Record the names sent more than once with different values (:attr:`conflicting_headers`)."""
        seen: dict[bytes, bytes] = {}
        for raw_name, raw_value in raw_headers:
            name = raw_name.lower()
            if name in seen and seen[name] != raw_value:
                if not self.conflicting_headers:
                    self.conflicting_headers = set()
                self.conflicting_headers.add(name)
            seen[name] = raw_value

    async def _serve(self, receive: Any) -> None:
        finished = self.finished.future
        yielded = False
        while not finished.done():
            if self.body_done or self.response_started:
                if not yielded:
                    # Most requests are answered by their task's first step (nothing in it waits):
                    # let it run before watching for a disconnect, which costs a task, its
                    # cancellation and two exceptions that such a request never needs.
                    yielded = True
                    await asyncio.sleep(0)
                    continue
                # From here on the exchange may end before the client sends anything more (a
                # disconnect): whichever comes first. The end cancels the wait for a message
                # through a callback: asyncio.wait() would add a waiter future and two callbacks
                # per request, kept as long as a stream stays open.
                incoming = asyncio.ensure_future(receive())

                def stop_waiting(_: Any, incoming: asyncio.Future[Any] = incoming) -> None:
                    incoming.cancel()

                finished.add_done_callback(stop_waiting)
                try:
                    message = await incoming
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if finished.done() and not (task is not None and task.cancelling()):
                        break  # the exchange ended: nothing more to read
                    raise
                finally:
                    finished.remove_done_callback(stop_waiting)
            else:
                # While the request's body is still coming, only a message can move things on, so
                # it is awaited directly: no task and no wait per chunk, a tenth of a small call.
                message = await receive()
            try:
                await self.dispatch(message)
            except StopConsumer:
                raise
            except Exception as exc:
                await self.fail(exc)
                return

    async def fail(self, exc: BaseException) -> None:
        """
        End the exchange after an unexpected error: a JSON-RPC error (503 with ``Retry-After`` when a
        backing service is away, else 500) if nothing was sent yet, else the end of the stream. The
        client is never left waiting, and the error's details stay in the log.
        """
        outage = is_outage(exc)
        logger.error("%s while serving %s %s", "Service unavailable" if outage else "Unexpected error",
                     self.scope.get("method"), self.scope.get("path"), exc_info=exc)
        if not self.response_started:
            if outage:
                await self.send_error(503, None, InternalError("Service temporarily unavailable; retry shortly"),
                                      [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())])
            else:
                await self.send_error(500, None, InternalError())
        elif self.sse_started:
            await self.end_sse()
        self.finished.set()

    async def dispatch(self, message: dict[str, Any]) -> None:
        name = _HANDLER_NAMES.get(message.get("type"))  # type: ignore[arg-type]
        handler = getattr(self, name if name is not None else get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    # ASGI events -----------------------------------------------------------------------------

    async def http_request(self, message: dict[str, Any]) -> None:
        if self.body_done or self.response_started:
            return
        if not self.body and not await self.before_body():
            return
        chunk = message.get("body", b"")
        if chunk:
            if not self.body:
                self.body = bytearray()
            self.body.extend(chunk)
        if len(self.body) > mcp_settings.MAX_REQUEST_BODY_SIZE:
            await self.refuse_too_large()
            return
        if not message.get("more_body", False):
            self.body_done = True
            await self.handle(bytes(self.body))

    async def http_disconnect(self, message: dict[str, Any]) -> None:
        self.disconnected = True
        await self.on_disconnect()
        self.finished.set()
        raise StopConsumer()

    async def before_body(self) -> bool:
        """Checks that need no body; return False after sending a refusal."""
        return True

    def host_and_origin_refusal(self, origin: str | None) -> Refusal | None:
        """
        DNS-rebinding protection (MCP spec 2025-11-25, basic/transports#security-warning; MCP
        security best practices): the refusal for a foreign Host or ``origin``, else None.
        """
        if not self.conflicting_headers.isdisjoint((b"host", b"origin")):  # builds no set
            return Refusal("Conflicting Host or Origin headers")
        host = self.headers.get(b"host")
        if not host_is_allowed(host):
            # A foreign Host never reaches the server: a rebinding page cannot talk to 127.0.0.1.
            return MisdirectedHost()
        if origin is not None and not origin_is_allowed(origin, host, self.scope.get("scheme") or "http",
                                                        self.scope.get("server")):
            return ForbiddenOrigin()
        return None

    async def guard_host_and_origin(self) -> bool:
        """Refuse a foreign Host or Origin; False after sending the refusal. An allowed page gets CORS headers."""
        origin = self.headers.get(b"origin")
        refusal = self.host_and_origin_refusal(origin)
        if refusal is not None:
            await self.refuse(refusal)
            return False
        if origin is not None and cors.cors_allows(origin, self.headers.get(b"host"), self.scope.get("server")):
            self.cors_headers = cors.response_headers(origin)
        return True

    async def answer_preflight(self) -> None:
        """
        A CORS preflight: 204 with the allowed methods and headers for an allowed origin, else the
        Host/Origin refusal or 403 without CORS headers (the browser then refuses the request).
        """
        origin = self.headers[b"origin"]
        refusal = self.host_and_origin_refusal(origin)
        if refusal is None and not cors.cors_allows(origin, self.headers.get(b"host"), self.scope.get("server")):
            refusal = ForbiddenOrigin("Forbidden: this origin may not call the endpoint cross-origin")
        if refusal is not None:
            await self.refuse(refusal)
            return
        await self.send_response(204, b"", cors.preflight_headers(
            origin, self.headers.get(b"access-control-request-headers"), self.cors_methods))

    async def admit(self) -> bool:
        """The checks every request passes before anything else: Host, Origin, then authentication."""
        return await self.guard_host_and_origin() and await self.authenticate()

    async def handle(self, body: bytes) -> None:
        raise NotImplementedError(".handle() must be overridden.")

    async def on_disconnect(self) -> None:
        """The client went away."""

    async def refuse_too_large(self) -> None:
        limit = mcp_settings.MAX_REQUEST_BODY_SIZE
        await self.refuse(PayloadTooLarge(f"Request body larger than {limit} bytes"))

    async def refuse(self, refusal: Refusal, request_id: Any = None,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
        """Send a refusal with its HTTP status and a JSON-RPC error body."""
        await self.send_error(refusal.status, request_id, refusal, headers)

    def new_task(self, coroutine: Any) -> asyncio.Task[Any]:
        """A task on this request's loop, taken from the request's own future: asyncio.ensure_future()
        would look the loop up again (a getpid() system call on Python 3.11) after testing its argument."""
        return self.finished.future.get_loop().create_task(coroutine)

    def spawn(self, coroutine: Any, *, eager: bool = False) -> asyncio.Task[Any]:
        """
        Run a task owned by this request; it is cancelled when the consumer ends. ``eager`` runs it
        at once, up to its first real wait, where Python allows it (3.12 and later): a task that
        never waits — a notification written to a stream whose socket takes it — then costs no
        trip through the event loop, and is not kept.
        """
        if eager and EAGER_TASKS:
            task = asyncio.Task(coroutine, loop=asyncio.get_running_loop(), eager_start=True)
            if task.done():
                return task
        else:
            task = self.new_task(coroutine)
        background = self.background
        if not background:
            self.background = {task}
        else:
            if len(background) >= 8:
                # A long stream spawns a keep-alive every few seconds: let the finished ones go.
                # Finished tasks are dropped here rather than each by a done callback, which
                # would be one more loop callback for every request.
                background.difference_update([done for done in background if done.done()])
            background.add(task)
        return task

    # A stream and its credential ------------------------------------------------------------

    async def start_sse(self, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        started = self.sse_started
        await super().start_sse(headers)
        if not started and self.sse_started:
            watch(self)  # ended at the credential's expiry; re-checked at keep-alives

    async def _keepalive(self) -> None:
        await super()._keepalive()
        if await lapsed(self):
            await self.end_for_credential("no longer authenticates")

    async def mcp_credentials_changed(self, event: dict[str, Any]) -> None:
        """A credential of ``event["user"]`` ended somewhere: if it is this stream's user, check now."""
        watched = watched_user(self)
        if watched is not None and str(watched) == event.get("user") and await lapsed(self, now=True):
            await self.end_for_credential("was revoked")

    async def end_for_credential(self, why: str) -> None:
        """End this stream because its credential ended (``transports.credential_watch``)."""
        if self.finished.is_set() or self.disconnected:
            return
        logger.info("Ending an MCP stream of %s: its credential %s", self.user, why)
        await self.end_sse()

    # Teardown ---------------------------------------------------------------------------------

    async def cleanup(self) -> None:
        """Leave groups, stop the reader and keep-alives. Request tasks decide for themselves."""
        unwatch(self)
        self.finished.set()
        timer = getattr(self, "_keepalive_timer", None)
        if timer is not None:
            timer.cancel()
        for task in list(self.background):
            task.cancel()
        await self.leave_all()
