"""
A small asyncio HTTP/1.1 + SSE client for ``benchmarks/delivery.py`` and ``benchmarks/burst.py``: one
request per connection, an ``asyncio.Protocol`` per exchange so a hundred open ``text/event-stream``
responses cost one object each and no task. Every SSE message is stamped with ``time.perf_counter()`` taken the moment
its bytes reached ``data_received``, before any parsing. Handles ``Content-Length``, chunked and
read-until-close bodies; every wait (connect, head, body, message) has a deadline.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

JSON = "application/json"
SSE = "text/event-stream"
TIMEOUT = 15.0

OnMessage = Callable[[float, dict[str, Any]], None]


class Exchange(asyncio.Protocol):
    """One request and its response; SSE data events are decoded into ``messages`` as they come."""

    def __init__(self, on_message: OnMessage | None = None) -> None:
        loop = asyncio.get_running_loop()
        self.head: asyncio.Future[None] = loop.create_future()
        self.done: asyncio.Future[None] = loop.create_future()
        self.on_message = on_message
        self.transport: asyncio.Transport | None = None
        self.status = 0
        self.headers: dict[str, str] = {}
        self.messages: list[tuple[float, dict[str, Any]]] = []
        self.body = bytearray()
        self.sent_at = 0.0
        self.closed = False
        self._changed = asyncio.Event()
        self._buf = b""
        self._mode = ""  # "chunked", "length", "eof"
        self._left = 0  # bytes left: of the body (length) or of the current chunk + CRLF (chunked)
        self._sse = False
        self._lines = b""
        self._data: list[bytes] = []
        self._event_name = b""

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    # --- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if not self.head.done():
            self._buf += data
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head, data, self._buf = self._buf[:end].decode("latin-1"), self._buf[end + 4:], b""
            status_line, *lines = head.split("\r\n")
            self.status = int(status_line.split()[1])
            for line in lines:
                name, _, value = line.partition(":")
                self.headers[name.strip().lower()] = value.strip()
            self._sse = self.content_type == SSE
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                self._mode = "chunked"
            elif "content-length" in self.headers:
                self._mode, self._left = "length", int(self.headers["content-length"])
            else:
                self._mode = "eof"
            self.head.set_result(None)
            if self._mode == "length" and self._left == 0:
                self._finish()
        if data and not self.done.done():
            self._body(data, now)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.head.done():
            self.head.set_exception(ConnectionError(f"connection closed before the response head: {exc}"))
        self._finish()

    # --- body --------------------------------------------------------------------------------

    def _body(self, data: bytes, now: float) -> None:
        if self._mode == "length":
            data = data[:self._left]
            self._left -= len(data)
            self._emit(data, now)
            if self._left <= 0:
                self._finish()
            return
        if self._mode == "eof":
            self._emit(data, now)
            return
        self._buf += data
        while True:
            if self._left == 0:  # expecting a chunk-size line
                end = self._buf.find(b"\r\n")
                if end < 0:
                    return
                size = int(self._buf[:end].split(b";")[0], 16)
                self._buf = self._buf[end + 2:]
                if size == 0:
                    self._finish()
                    return
                self._left = size + 2
            if len(self._buf) < self._left:
                return
            chunk, self._buf = self._buf[:self._left - 2], self._buf[self._left:]
            self._left = 0
            self._emit(chunk, now)

    def _emit(self, data: bytes, now: float) -> None:
        if not self._sse:
            self.body.extend(data)
            return
        self._lines += data
        while (end := self._lines.find(b"\n")) >= 0:
            line, self._lines = self._lines[:end].rstrip(b"\r"), self._lines[end + 1:]
            if not line:
                if self._data:
                    data = b"\n".join(self._data)
                    # An event named other than "message" (HTTP+SSE's "endpoint") carries text, not JSON.
                    if self._event_name in (b"", b"message"):
                        message = json.loads(data)
                    else:
                        message = {"event": self._event_name.decode(), "data": data.decode()}
                    self._data, self._event_name = [], b""
                    self.messages.append((now, message))
                    if self.on_message is not None:
                        self.on_message(now, message)
                    self._changed.set()
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)
            elif line.startswith(b"event:"):
                self._event_name = line[6:].strip()
            # comments (keep-alives), "id:" and "retry:" lines are not needed here

    def _finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)
        self._changed.set()

    # --- waiting -----------------------------------------------------------------------------

    async def wait_message(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
                           ) -> dict[str, Any]:
        """The first SSE message matching ``predicate``; TimeoutError after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for _, message in self.messages:
                if predicate(message):
                    return message
            if self.done.done():
                raise ConnectionError(f"the stream ended without the expected message: {self.messages}")
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), max(0.0, deadline - loop.time()))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()


async def open_exchange(host: str, port: int, method: str, message: Any = None,
                        headers: Mapping[str, str] | None = None, *, on_message: OnMessage | None = None,
                        timeout: float = TIMEOUT, path: str = "/mcp") -> Exchange:
    """Connect, send one request to ``path`` and return once the response head has arrived."""
    loop = asyncio.get_running_loop()
    body = b"" if message is None else json.dumps(message).encode()
    fields = {"Host": f"{host}:{port}", "Content-Length": str(len(body))}
    if method == "POST":
        fields.update({"Content-Type": JSON, "Accept": f"{JSON}, {SSE}"})
    fields.update(headers or {})
    request = "".join([f"{method} {path} HTTP/1.1\r\n", *(f"{k}: {v}\r\n" for k, v in fields.items()), "\r\n"])
    _, exchange = await asyncio.wait_for(
        loop.create_connection(lambda: Exchange(on_message), host, port), timeout)
    try:
        exchange.sent_at = time.perf_counter()
        assert exchange.transport is not None
        exchange.transport.write(request.encode("latin-1") + body)
        await asyncio.wait_for(asyncio.shield(exchange.head), timeout)
    except BaseException:
        exchange.close()
        raise
    return exchange


class Reply(NamedTuple):
    status: int
    headers: dict[str, str]
    body: Any  # the decoded JSON body, or for SSE the response to the request's id (or None)
    sent_at: float
    seconds: float  # from writing the request to the end of the response


async def call(host: str, port: int, method: str, message: Any = None, headers: Mapping[str, str] | None = None,
               *, timeout: float = TIMEOUT, path: str = "/mcp") -> Reply:
    """One complete request/response; a JSON-RPC answer delivered over SSE is picked out by id."""
    exchange = await open_exchange(host, port, method, message, headers, timeout=timeout, path=path)
    try:
        await asyncio.wait_for(asyncio.shield(exchange.done), timeout)
    finally:
        exchange.close()
    seconds = time.perf_counter() - exchange.sent_at
    body: Any = None
    if exchange._sse:
        wanted = message.get("id") if isinstance(message, dict) else None
        answers = [m for _, m in exchange.messages if "method" not in m and m.get("id") == wanted]
        body = answers[-1] if answers else None
    elif exchange.body and exchange.content_type == JSON:
        body = json.loads(exchange.body)
    return Reply(exchange.status, exchange.headers, body, exchange.sent_at, seconds)
