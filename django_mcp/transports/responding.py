"""
Writing a request's response: a whole JSON (or empty) response, or an SSE stream with its
keep-alive comments, each ASGI message sent one at a time, nothing after the response has ended
or the client has gone.
"""

import asyncio
from typing import Any

from ..conf import mcp_settings
from ..protocol import jsonrpc
from ..signals import request_refused, tell
from . import constants, sse


class RespondingMixin:
    """The response half of :class:`~django_mcp.transports.base.HttpStreamConsumer`."""

    base_send: Any
    finished: Any
    _send_lock: asyncio.Lock
    cors_headers: list[tuple[bytes, bytes]] | None
    disconnected: bool
    response_started: bool
    response_ended: bool
    sse_started: bool
    transport: str
    #: The consumer's: runs a task the request owns (a keep-alive).
    spawn: Any

    async def _send(self, message: dict[str, Any]) -> None:
        if self.disconnected or self.response_ended:
            return
        async with self._send_lock:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.response_ended = True
            await self.base_send(message)

    async def send_response(self, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None,
                            *, end: bool = True) -> None:
        """Send a whole response; ``end`` finishes the consumer."""
        if self.response_started:
            return
        self.response_started = True
        all_headers = list(headers or [])
        if self.cors_headers:
            all_headers += self.cors_headers
        if body:
            all_headers.append((b"content-length", str(len(body)).encode()))
        await self._send({"type": "http.response.start", "status": status, "headers": all_headers})
        await self._send({"type": "http.response.body", "body": body, "more_body": False})
        if end:
            self.finished.set()

    async def send_json(self, status: int, payload: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        await self.send_response(status, jsonrpc.encode(payload), [*constants.JSON_HEADERS, *(headers or [])])

    async def send_error(self, status: int, request_id: Any, error: Any,
                         headers: list[tuple[bytes, bytes]] | None = None) -> None:
        """An HTTP error whose body is a JSON-RPC error (id null when the request was unreadable)."""
        body = jsonrpc.error_response(request_id, error)
        tell(request_refused, type(self), status=status, error_code=body["error"].get("code"), transport=self.transport)
        await self.send_json(status, body, headers)

    async def start_sse(self, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        """Begin an SSE response and its keep-alive comments."""
        if self.sse_started or self.response_started:
            return
        self.response_started = self.sse_started = True
        await self._send({"type": "http.response.start", "status": 200,
                          "headers": [*constants.SSE_HEADERS, *(headers or []), *(self.cors_headers or ())]})
        self._schedule_keepalive()

    #: Chunks :meth:`send_sse` keeps back while it is a list (None: send at once), to go out in
    #: one ASGI message with :meth:`flush_sse`: a stream with several events already waiting
    #: writes them together — one write to the socket, not one each. Made a list by the loops that
    #: hand a stream its waiting events, and only while another waits behind the one at hand.
    _held_sse: list[bytes] | None = None

    def hold_sse(self) -> None:
        """Keep what :meth:`send_sse` is given back until :meth:`flush_sse`."""
        if self._held_sse is None:
            self._held_sse = []

    async def send_sse(self, chunk: bytes) -> None:
        held = self._held_sse
        if held is not None:
            held.append(chunk)
            return
        await self._send({"type": "http.response.body", "body": chunk, "more_body": True})

    async def flush_sse(self) -> None:
        """Send what was held back, in one message, and stop holding (see :meth:`hold_sse`)."""
        held = self._held_sse
        if held is not None:
            self._held_sse = None
            if held:
                await self._send({"type": "http.response.body", "body": b"".join(held), "more_body": True})

    async def end_sse(self) -> None:
        await self.flush_sse()
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})
        self.finished.set()

    def _schedule_keepalive(self) -> None:
        # A timer rather than a sleeping task: an idle stream should cost as little as possible.
        self._keepalive_timer = asyncio.get_running_loop().call_later(
            mcp_settings.SSE_KEEPALIVE_SECONDS, self._keepalive_due)

    def _keepalive_due(self) -> None:
        if self.finished.is_set() or self.disconnected:
            return
        self.spawn(self._keepalive())
        self._schedule_keepalive()

    async def _keepalive(self) -> None:
        await self.send_sse(sse.keepalive())
        await self.on_keepalive()

    async def on_keepalive(self) -> None:
        """Called after each keep-alive comment on an open stream."""
