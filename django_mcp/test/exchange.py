"""
One HTTP request to an ASGI application in the test's process: no socket, no server.

The application is driven with two plain queues, every wait is bounded, and a response is read
as it comes — an SSE stream event by event, so the test client can answer what the server asks
in the middle of a call (legacy elicitation) and leave a long-lived stream open while the test
does something else. An exception that escapes the application fails the exchange: the test
sees it, as Django's test client re-raises a view's exception.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from .errors import NoAnswer


class Exchange:
    """One request to ``app``, from its first ASGI event to the application's end."""

    def __init__(self, app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b"",
                 *, query: bytes = b"", client: tuple[str, int] = ("127.0.0.1", 50000),
                 server: tuple[str, int] = ("testserver", 80), extra_scope: dict[str, Any] | None = None) -> None:
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
                 "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
                 "query_string": query, "root_path": "", "headers": headers, "client": client, "server": server,
                 **(extra_scope or {})}
        self.description = f"{method} {path}"
        self.inbound: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbound: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.inbound.put_nowait({"type": "http.request", "body": body, "more_body": False})
        self.task = asyncio.ensure_future(app(scope, self.inbound.get, self.outbound.put))
        self.status = 0
        self.headers: dict[str, str] = {}
        self.finished = False

    async def _next_event(self, timeout: float) -> dict[str, Any] | None:
        """The application's next ASGI event; None once it has ended; :class:`NoAnswer` after ``timeout``."""
        if not self.outbound.empty():
            return self.outbound.get_nowait()
        getter = asyncio.ensure_future(self.outbound.get())
        try:
            done, _ = await asyncio.wait({getter, self.task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            getter.cancel()
            raise
        if getter in done:
            return getter.result()
        getter.cancel()
        if self.task.done():
            self.task.result()  # an exception that escaped the application fails the test here
            return self.outbound.get_nowait() if not self.outbound.empty() else None
        raise NoAnswer(f"{self.description}: the server sent nothing for {timeout:g} s")

    async def start(self, timeout: float) -> None:
        """Wait for the response's status and headers."""
        event = await self._next_event(timeout)
        if event is None:
            raise NoAnswer(f"{self.description}: the application ended without a response")
        if event["type"] != "http.response.start":
            raise AssertionError(f"{self.description}: the application sent {event['type']} before its response")
        self.status = event["status"]
        self.headers = {name.decode("latin-1").lower(): value.decode("latin-1")
                        for name, value in event.get("headers", [])}

    async def chunks(self, timeout: float) -> AsyncIterator[bytes]:
        """The body as the application sends it, until its last chunk."""
        while not self.finished:
            event = await self._next_event(timeout)
            if event is None:
                raise NoAnswer(f"{self.description}: the application ended in the middle of its response")
            if event["type"] != "http.response.body":
                continue  # trailers, pathsend…: nothing a test client reads
            self.finished = not event.get("more_body", False)
            yield event.get("body", b"")

    async def body(self, timeout: float) -> bytes:
        """The whole body."""
        return b"".join([chunk async for chunk in self.chunks(timeout)])

    async def close(self, timeout: float) -> None:
        """The client goes away (on a stream this cancels what it was for); the application must finish."""
        self.inbound.put_nowait({"type": "http.disconnect"})
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout)
        except asyncio.TimeoutError:
            self.task.cancel()
            raise NoAnswer(f"{self.description}: the application did not finish within {timeout:g} s of the "
                           "client going away") from None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class ServerEvents:
    """The JSON-RPC messages of an SSE response (``text/event-stream``), parsed as they arrive."""

    def __init__(self, exchange: Exchange, timeout: float) -> None:
        self.exchange = exchange
        self.timeout = timeout
        self.buffer = b""
        self.chunks = exchange.chunks(timeout)
        #: The id of the last event that had one, and the server's ``retry`` (ms): for resuming
        #: a legacy stream the server closed early (MCP spec 2025-11-25, basic/transports#resumability-and-redelivery).
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None

    def resume_on(self, exchange: Exchange) -> None:
        """Go on reading from ``exchange``, the GET that resumed the stream."""
        self.exchange, self.buffer, self.chunks = exchange, b"", exchange.chunks(self.timeout)

    async def next_message(self) -> dict[str, Any] | None:
        """The next message, or None when the stream ended; comments and priming events are skipped."""
        while True:
            while b"\n\n" in self.buffer:
                block, self.buffer = self.buffer.split(b"\n\n", 1)
                data = []
                for line in block.split(b"\n"):
                    if line.startswith(b"data:"):
                        data.append(line[5:].removeprefix(b" "))
                    elif line.startswith(b"id:"):
                        self.last_event_id = line[3:].strip().decode("utf-8", "replace")
                    elif line.startswith(b"retry:") and line[6:].strip().isdigit():
                        self.retry_ms = int(line[6:].strip())
                payload = b"\n".join(data)
                if payload.strip():
                    return json.loads(payload)
            try:
                chunk = await self.chunks.__anext__()
            except StopAsyncIteration:
                return None
            self.buffer += chunk.replace(b"\r\n", b"\n")
