"""
The stdio transport (MCP spec 2026-07-28, basic/transports/stdio): newline-delimited JSON-RPC on stdin and stdout, for
clients that start the server as a subprocess (Claude Desktop, Cursor, IDEs).

Both eras on one pipe (MCP spec 2026-07-28, basic/versioning#backward-compatibility-with-initialization-based-versions):
a process that opens with ``initialize`` speaks the negotiated legacy version for the rest of its life; a request
carrying the 2026-07-28 ``_meta`` envelope is served statelessly, on its own. Nothing but MCP messages is written to
stdout: file descriptor 1 points at stderr and messages go to a duplicate of the original (django_mcp/stdio.py), so
stray prints, logs and child processes cannot corrupt the protocol.
"""

import asyncio
import logging
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO

from channels.layers import get_channel_layer
from ..authentication import IncomingRequest, authenticate, get_authenticators
from ..conf import mcp_settings
from ..hooks import Delivery, McpNotification, McpRequest, global_chains
from ..protocol import jsonrpc
from ..protocol.context import RequestContext
from ..protocol.dispatcher import Dispatcher
from ..protocol.errors import InvalidRequest, McpError, ParseError
from ..protocol.extensions import extension_listen_groups, extension_listen_wants
from ..protocol.handlers.lifecycle import handshake
from ..protocol.input import wait_for_client_answer
from ..protocol.envelope import modern_version_of, read_envelope
from ..protocol.versions import MODERN_VERSIONS, Era
from ..fanout import BROADCAST_GROUP, NOTIFY, layer_call, resource_group
from ..sites import get_default_site
from ..stdio import redirect_stdout
from .http import dispatcher_for
from .lines import LineReader, LineTooLong
from .requests import initialize_context, serve_initialize, serve_notification, serve_request
from .visibility import may_deliver


logger = logging.getLogger("django_mcp.stdio")

SHUTDOWN_GRACE_SECONDS = 2.0


class StdioSession:
    """The legacy session of a stdio process: in memory, since the process is the session."""

    def __init__(self, server: "StdioServer", protocol_version: str, capabilities: dict[str, Any],
                 client_info: dict[str, Any] | None) -> None:
        self.server = server
        self.id = f"stdio-{uuid.uuid4().hex}"
        self.protocol_version = protocol_version
        self.client_capabilities = capabilities
        self.client_info = client_info
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()

    async def set_log_level(self, level: str) -> None:
        self.log_level = level

    async def subscribe(self, uri: str) -> None:
        self.subscriptions.add(uri)
        await self.server.join(resource_group(uri))

    async def unsubscribe(self, uri: str) -> None:
        self.subscriptions.discard(uri)


class StdioServer:
    """Serve one client over a pair of byte streams until the input ends."""

    #: Authentication classes; None means ``DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]``.
    authentication_classes: Any = None

    def __init__(self, reader: LineReader, output: BinaryIO, *, user: Any, site: Any = None,
                 authentication_classes: Any = None) -> None:
        self.reader = reader
        self.output = output
        # The user the process was started for; an authentication class turns it into the
        # request's user (ProcessUserAuthentication), like every other credential.
        self.process_user = user
        self.site = site or get_default_site()
        if authentication_classes is not None:
            self.authentication_classes = authentication_classes
        self.session: StdioSession | None = None
        self.tasks: dict[Any, asyncio.Task[Any]] = {}
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        self.write_lock = asyncio.Lock()
        self.channel_layer = get_channel_layer()
        self.channel_name: str | None = None
        self.groups: set[str] = set()
        self._reader_task: asyncio.Task[Any] | None = None

    @property
    def dispatcher(self) -> Dispatcher:
        return dispatcher_for(self.site)

    async def serve(self) -> None:
        """Read lines until end of input, then stop promptly (MCP spec 2026-07-28, basic/transports/stdio)."""
        try:
            while True:
                try:
                    line = await self.reader.readline()
                except LineTooLong as exc:
                    await self.write(jsonrpc.error_response(None, InvalidRequest(str(exc))))
                    continue
                if line is None:
                    break
                if line.strip():
                    await self.handle_line(line)
        finally:
            # End of input: requests already read get a short grace to answer (a shell pipe closes
            # stdin right after writing), then the process stops promptly (MCP spec 2026-07-28, basic/transports/stdio).
            if self.tasks:
                await asyncio.wait(list(self.tasks.values()), timeout=SHUTDOWN_GRACE_SECONDS)
            for task in list(self.tasks.values()):
                task.cancel()
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)
            await self.leave_all()

    async def write(self, message: Any) -> None:
        data = jsonrpc.encode(message) + b"\n"
        async with self.write_lock:
            # In a thread: a client that stops reading fills the pipe, and that must not stall
            # the event loop (the other requests, the input) along with this write.
            await asyncio.to_thread(self._write, data)

    def _write(self, data: bytes) -> None:
        self.output.write(data)
        self.output.flush()

    async def handle_line(self, line: bytes) -> None:
        try:
            payload = jsonrpc.decode(line)
        except ParseError as exc:
            await self.write(jsonrpc.error_response(None, exc))
            return
        if isinstance(payload, list):
            await self.handle_batch(payload)
            return
        try:
            message = jsonrpc.validate_message(payload)
        except McpError as exc:
            await self.write(jsonrpc.error_response(jsonrpc.request_id_or_none(payload), exc))
            return
        await self.handle_message(message)

    async def handle_batch(self, batch: list[Any]) -> None:
        """
        2025-03-26 only: each member is handled as if it came on its own line (MCP spec 2026-07-28, basic#messages).
        """
        if self.session is None or self.session.protocol_version != "2025-03-26" or not batch:
            await self.write(jsonrpc.error_response(None, InvalidRequest("Invalid Request: batches are not "
                                                                         "accepted here")))
            return
        for member in batch:
            try:
                message = jsonrpc.validate_message(member)
                if message.get("method") == "initialize":
                    raise InvalidRequest("Invalid Request: initialize cannot be batched")
            except McpError as exc:
                await self.write(jsonrpc.error_response(jsonrpc.request_id_or_none(member), exc))
                continue
            await self.handle_message(message)

    async def handle_message(self, message: dict[str, Any]) -> None:
        if jsonrpc.is_response(message):
            future = self.pending.get(_key(message["id"]))
            if future is not None and not future.done():
                future.set_result(message)
            return
        if jsonrpc.is_notification(message):
            await serve_notification(self.dispatcher, message, self.notification_context(message),
                                     self.act_on_notification)
            return
        if modern_version_of(message) is not None:
            self.start(message, self.modern_context)
        elif message["method"] == "initialize":
            await self.initialize(message)
        elif self.session is None:
            await self.write(jsonrpc.error_response(message["id"], InvalidRequest(
                "Invalid Request: send initialize first, or the 2026-07-28 _meta envelope")))
        else:
            self.start(message, self.legacy_context)

    def start(self, message: dict[str, Any], context: Callable[[dict[str, Any], Any, Any], RequestContext]) -> None:
        """Serve a request concurrently, so the client can answer our questions or cancel it meanwhile."""
        task = asyncio.ensure_future(self.serve_request(message, context))
        slot = _key(message["id"])
        self.tasks[slot] = task
        task.add_done_callback(lambda _: self.tasks.pop(slot, None))

    async def authenticate(self) -> tuple[Any, Any]:
        """Who is asking, decided per request as on every transport; raises ``AuthenticationFailed``."""
        return await authenticate(get_authenticators(self.authentication_classes),
                                  IncomingRequest(transport="stdio", process_user=self.process_user))

    async def serve_request(self, message: dict[str, Any],
                            context: Callable[[dict[str, Any], Any, Any], RequestContext]) -> None:
        try:
            user, auth = await self.authenticate()
            ctx = context(message, user, auth)
        except McpError as exc:
            await self.write(jsonrpc.error_response(message["id"], exc))
            return
        try:
            response = await serve_request(self.dispatcher, message, ctx)
        except asyncio.CancelledError:
            return  # cancelled: no response (MCP spec 2026-07-28, basic/patterns/cancellation)
        await self.write(response)

    def modern_context(self, message: dict[str, Any], user: Any, auth: Any) -> RequestContext:
        envelope = read_envelope(message.get("params"))
        return RequestContext.for_modern(envelope, message, user=user, auth=auth, send_message=self.write,
                                         listen=self.listen, transport="stdio")

    def legacy_context(self, message: dict[str, Any], user: Any, auth: Any) -> RequestContext:
        assert self.session is not None
        return RequestContext.for_legacy(self.session, message, user=user, auth=auth, send_message=self.write,
                                         send_request=self.ask_client, transport="stdio")

    def notification_context(self, message: dict[str, Any]) -> RequestContext:
        """The context of a notification from the client (no credential is asked for one)."""
        if self.session is not None and modern_version_of(message) is None:
            return RequestContext.for_legacy(self.session, message, user=self.process_user, transport="stdio")
        version = modern_version_of(message) or MODERN_VERSIONS[-1]
        return RequestContext(era=Era.MODERN, protocol_version=version, user=self.process_user,
                              method=message.get("method"), params=message.get("params"), transport="stdio")

    async def act_on_notification(self, notification: McpNotification) -> None:
        """``notifications/cancelled`` cancels the request it names; the others need nothing."""
        if notification.method == "notifications/cancelled":
            params = notification.params if isinstance(notification.params, dict) else {}
            task = self.tasks.get(_key(params.get("requestId")))
            if task is not None:
                task.cancel()

    async def initialize(self, message: dict[str, Any]) -> None:
        if self.session is not None:
            # The process is the session: it is initialized once (MCP spec 2025-11-25, basic/lifecycle#initialization).
            await self.write(jsonrpc.error_response(message["id"], InvalidRequest(
                "Invalid Request: this process is already initialized")))
            return

        async def run(request: McpRequest) -> dict[str, Any]:
            done = handshake(self.dispatcher, request.params, ctx.user)
            ctx.protocol_version, ctx.client_info = done.protocol_version, done.client_info
            self.session = StdioSession(self, done.protocol_version, done.client_capabilities, done.client_info)
            ctx.session = self.session
            return done.result

        try:
            user, auth = await self.authenticate()
            ctx = initialize_context(message, user=user, auth=auth, transport="stdio")
            result = await serve_initialize(self.dispatcher, message, ctx, run)
        except McpError as exc:
            await self.write(jsonrpc.error_response(message["id"], exc))
            return
        # List-changed notifications from any process reach an initialized client (legacy).
        self.listeners.append(self._forward_to_session)
        await self.join(BROADCAST_GROUP)
        await self.write(jsonrpc.result_response(message["id"], result))

    async def ask_client(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """A legacy server→client request (sampling, elicitation, roots) on stdout; waits for the answer."""
        request_id = f"srv-{uuid.uuid4().hex}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[_key(request_id)] = future
        try:
            await self.write(jsonrpc.request(request_id, method, params))
            return await wait_for_client_answer(future, method, mcp_settings.CLIENT_REQUEST_TIMEOUT_SECONDS)
        finally:
            self.pending.pop(_key(request_id), None)

    # Change notifications, through the channel layer like every other transport ---------------

    async def listen(self, honoured: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """
        ``subscriptions/listen`` on stdio (MCP spec 2026-07-28, basic/patterns/subscriptions): a queue fed by
        channel-layer events.
        """
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def wanted(event: dict[str, Any]) -> None:
            kind = event.get("kind")
            if kind == "resource":
                if event.get("uri") in honoured.get("resourceSubscriptions", []):
                    queue.put_nowait(event["message"])
            elif kind in ("tools", "prompts", "resources"):
                if honoured.get(f"{kind}ListChanged"):
                    queue.put_nowait(event["message"])
            elif extension_listen_wants(event, honoured):
                queue.put_nowait(event["message"])

        self.listeners.append(wanted)
        if any(honoured.get(flag) for flag in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")):
            await self.join(BROADCAST_GROUP)
        for uri in honoured.get("resourceSubscriptions", []):
            await self.join(resource_group(uri))
        for group in extension_listen_groups(honoured):
            await self.join(group)

        async def notifications() -> AsyncIterator[dict[str, Any]]:
            try:
                while True:
                    yield await queue.get()
            finally:
                self.listeners.remove(wanted)

        return notifications()

    def _forward_to_session(self, event: dict[str, Any]) -> None:
        session = self.session
        if session is None:
            return
        if event.get("kind") == "resource" and event.get("uri") not in session.subscriptions:
            return
        asyncio.ensure_future(self.write(event["message"]))

    async def join(self, group: str) -> None:
        if self.channel_layer is None or group in self.groups:
            return
        if self.channel_name is None:
            self.channel_name = await self.channel_layer.new_channel()
            self._reader_task = asyncio.ensure_future(self._read_channel())
        self.groups.add(group)
        await layer_call(self.channel_layer.group_add, group, self.channel_name)

    async def _read_channel(self) -> None:
        assert self.channel_layer is not None and self.channel_name is not None
        while True:
            event = await self.channel_layer.receive(self.channel_name)
            if event.get("type") != NOTIFY:
                continue
            chains = global_chains()
            if chains.around("deliver"):
                try:
                    await chains.run(Delivery(str(event.get("group", "")), event, (self,), self._hand_over))
                except Exception:  # a hook's fault must not stop the reader
                    logger.exception("A hook around delivering a notification failed")
            elif await self.may_deliver(event):
                self.tell_listeners(event)

    async def _hand_over(self, delivery: Delivery) -> None:
        if await self.may_deliver(delivery.event):
            self.tell_listeners(delivery.event)

    def tell_listeners(self, event: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            listener(event)

    async def may_deliver(self, event: dict[str, Any]) -> bool:
        if not event.get("visibility"):
            return True
        try:
            user, auth = await self.authenticate()
        except Exception:  # a credential that no longer holds sees nothing
            return False
        return await may_deliver(event, self.dispatcher().backend, user=user, auth=auth)

    async def leave_all(self) -> None:
        if self._reader_task is not None:
            self._reader_task.cancel()
        if self.channel_layer is not None and self.channel_name is not None:
            for group in self.groups:
                await layer_call(self.channel_layer.group_discard, group, self.channel_name)


def _key(request_id: Any) -> Any:
    return (type(request_id).__name__, request_id)


async def serve_stdio(*, user: Any, site: Any = None, max_line_bytes: int | None = None) -> None:
    """Serve the process's real stdin and stdout (redirecting fd 1 to stderr first, if not done yet)."""
    limit = max_line_bytes or mcp_settings.MAX_REQUEST_BODY_SIZE
    reader = LineReader(sys.stdin.buffer, limit=limit)
    await StdioServer(reader, redirect_stdout(), user=user, site=site).serve()
