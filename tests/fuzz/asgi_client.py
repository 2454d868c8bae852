"""
An in-process HTTP client for the ASGI application: one exchange at a time, every wait bounded.

It drives the application with plain queues rather than Channels' ``ApplicationCommunicator``,
whose ``receive_output`` cancels the application when a wait times out: a stream that is open on
purpose (a session's GET stream, ``subscriptions/listen``, ``/sse``) must be read for a while and
then let go of, not killed. An exception that escapes the application fails the exchange.
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from .checks import SSE, content_type

TIMEOUT = 10.0


class Hang(AssertionError):
    """The application did not answer (or did not finish) in time."""


@dataclass
class Answer:
    """What came back: status, headers (lower-case names), the body read, and whether it was held open."""

    status: int
    headers: dict[bytes, bytes]
    body: bytes = b""
    held: bool = False
    extra: list[dict[str, Any]] = field(default_factory=list)

    @property
    def is_sse(self) -> bool:
        return content_type(self.headers) == SSE


class Exchange:
    """One HTTP request to the application, from the first event to the application's end."""

    def __init__(self, app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b"",
                 query: bytes = b"") -> None:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": path, "raw_path": path.encode("utf-8", "surrogateescape"),
                 "query_string": query, "root_path": "", "headers": headers,
                 "client": ("127.0.0.1", 40000), "server": ("testserver", 80)}
        self.inbound: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbound: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.inbound.put_nowait({"type": "http.request", "body": body, "more_body": False})
        self.task = asyncio.ensure_future(app(scope, self.inbound.get, self.outbound.put))

    async def next_event(self, timeout: float) -> dict[str, Any] | None:
        """The application's next ASGI event; None once it has ended; :class:`Hang` after ``timeout``."""
        getter = asyncio.ensure_future(self.outbound.get())
        done, _ = await asyncio.wait({getter, self.task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            return getter.result()
        getter.cancel()
        if self.task.done():
            self.task.result()  # an exception that escaped the application fails the test here
            if not self.outbound.empty():
                return self.outbound.get_nowait()
            return None
        raise Hang(f"nothing from the application within {timeout} s")

    async def response(self, *, hold: bool = False, timeout: float = TIMEOUT) -> Answer:
        """
        Read the response. A finite one must end within ``timeout``; with ``hold``, an SSE stream
        may stay open, and is read up to its first event (then the caller lets go of it).
        """
        start = await self.next_event(timeout)
        if start is None:
            raise Hang("the application ended without a response")
        assert start["type"] == "http.response.start", start
        answer = Answer(start["status"], {name.lower(): value for name, value in start.get("headers", [])})
        chunks: list[bytes] = []
        while True:
            event = await self.next_event(timeout)
            if event is None:
                raise Hang("the application ended in the middle of its response")
            if event["type"] != "http.response.body":
                answer.extra.append(event)
                continue
            chunks.append(event.get("body", b""))
            if not event.get("more_body", False):
                break
            if hold and answer.is_sse and b"\n\n" in b"".join(chunks):
                answer.held = True
                break
        answer.body = b"".join(chunks)
        return answer

    async def read_more(self, timeout: float) -> tuple[bytes, bool]:
        """More of a held stream: the next chunk, and whether more may follow."""
        event = await self.next_event(timeout)
        if event is None:
            return b"", False
        return event.get("body", b""), bool(event.get("more_body", False))

    async def close(self, timeout: float = TIMEOUT) -> None:
        """The client goes away; the application must then finish, without an exception."""
        self.inbound.put_nowait({"type": "http.disconnect"})
        try:
            await asyncio.wait_for(asyncio.shield(self.task), timeout)
        except asyncio.TimeoutError:
            self.task.cancel()
            raise Hang(f"the application did not finish within {timeout} s of the disconnect") from None


async def request(app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b"",
                  *, query: bytes = b"", hold: bool = False, timeout: float = TIMEOUT) -> Answer:
    """One whole exchange: send, read the answer (``hold``: see :meth:`Exchange.response`), disconnect."""
    exchange = Exchange(app, method, path, headers, body, query)
    try:
        return await exchange.response(hold=hold, timeout=timeout)
    finally:
        await exchange.close(timeout)


class EventReader:
    """The events of a held SSE stream, as they arrive: ``(event name, data)`` pairs."""

    def __init__(self, exchange: Exchange, already: bytes = b"") -> None:
        self.exchange = exchange
        self.buffer = already
        self.ended = False

    async def next_event(self, timeout: float = TIMEOUT) -> tuple[str, str] | None:
        """The next event with data (comments skipped), or None when the stream ended; Hang after ``timeout``."""
        while True:
            while b"\n\n" in self.buffer:
                block, self.buffer = self.buffer.split(b"\n\n", 1)
                name, data = "message", []
                for line in block.decode("utf-8").split("\n"):
                    if line.startswith("data:"):
                        data.append(line[5:].removeprefix(" "))
                    elif line.startswith("event:"):
                        name = line[6:].strip()
                if data and any(data):  # empty data primes a resumable stream: no message
                    return name, "\n".join(data)
            if self.ended:
                return None
            chunk, more = await self.exchange.read_more(timeout)
            self.buffer += chunk.replace(b"\r\n", b"\n")
            self.ended = not more
