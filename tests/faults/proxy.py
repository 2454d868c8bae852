"""
A real TCP relay for fault injection: it forwards a local port to a service (PostgreSQL on
127.0.0.1:5432, Redis on 127.0.0.1:6379) and can take that service away and give it back.

The workers of the outage tests connect to the relay instead of the service, so a test can make
PostgreSQL or Redis unreachable *for those workers only* — the system services, and every other
test session using them, are untouched::

    with TcpProxy(("127.0.0.1", 5432), name="postgres") as proxy:
        ...  # point a worker at 127.0.0.1:proxy.port
        proxy.refuse()   # new connections are refused, open ones are reset
        proxy.restore()  # listening again on the same port

The relay runs an asyncio loop in a daemon thread; its methods are called from the test's thread
and wait until the loop has done what they ask. Bytes are copied unchanged in both directions.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from concurrent.futures import Future
from typing import Any, Self

__all__ = ["TcpProxy"]

_CHUNK = 64 * 1024


class TcpProxy:
    """
    A relay from ``127.0.0.1:<port>`` to ``target``. ``refuse()`` closes the listening socket (a
    connecting client gets ECONNREFUSED at once, as if the service were down) and resets every
    relayed connection; ``cut()`` only resets the relayed connections (a blip: the service is
    still there for whoever reconnects); ``restore()`` listens again on the same port.
    """

    def __init__(self, target: tuple[str, int], *, name: str = "proxy", host: str = "127.0.0.1") -> None:
        self.target = target
        self.name = name
        self.host = host
        self.port = 0
        self.accepted = 0
        self.resets = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter | None]] = set()

    def __repr__(self) -> str:
        state = "listening" if self.listening else "refusing"
        return f"<TcpProxy {self.name} {self.host}:{self.port} -> {self.target[0]}:{self.target[1]} {state}>"

    # --- lifecycle, from the test's thread ---------------------------------------------------

    def start(self) -> Self:
        """Start the loop thread and listen on a free port (kept for the relay's whole life)."""
        ready: Future[None] = Future()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set_result, None)
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name=f"tcp-proxy-{self.name}", daemon=True)
        self._thread.start()
        ready.result(timeout=5)
        self._call(self._listen())
        return self

    def stop(self) -> None:
        """Stop listening, reset every relayed connection and end the loop thread."""
        if self._loop is None:
            return
        self._call(self._close(reset=True))
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._loop = None

    def refuse(self) -> None:
        """The service goes away: refuse new connections and reset the open ones."""
        self._call(self._close(reset=True))

    def cut(self) -> None:
        """Reset the open connections but keep accepting new ones."""
        self._call(self._reset_all())

    def restore(self) -> None:
        """The service comes back: listen again on the same port."""
        if not self.listening:
            self._call(self._listen())

    @property
    def listening(self) -> bool:
        return self._server is not None

    @property
    def open_connections(self) -> int:
        return len(self._pairs)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _call(self, coroutine: Any, timeout: float = 10.0) -> Any:
        assert self._loop is not None, "the proxy is not started"
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    # --- inside the loop ---------------------------------------------------------------------

    async def _listen(self) -> None:
        # A fixed port once chosen: the workers' settings name it, so it must survive refuse().
        self._server = await asyncio.start_server(self._relay, self.host, self.port or None, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self, *, reset: bool) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        if reset:
            await self._reset_all()

    async def _reset_all(self) -> None:
        for client, upstream in list(self._pairs):
            _reset(client)
            if upstream is not None:
                _reset(upstream)
            self.resets += 1
        self._pairs.clear()

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        pair: tuple[asyncio.StreamWriter, asyncio.StreamWriter | None] = (client_writer, None)
        self._pairs.add(pair)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            self._pairs.discard(pair)
            _reset(client_writer)
            return
        if pair not in self._pairs:  # refused or cut while connecting upstream
            _reset(upstream_writer)
            return
        self._pairs.discard(pair)
        pair = (client_writer, upstream_writer)
        self._pairs.add(pair)
        try:
            await asyncio.gather(_pump(client_reader, upstream_writer), _pump(upstream_reader, client_writer))
        finally:
            self._pairs.discard(pair)
            for writer in pair:
                if writer is not None and not writer.is_closing():
                    writer.close()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction until EOF or an error; then half-close the other side."""
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        _reset(writer)


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort with a TCP reset (SO_LINGER 0): the peer sees ECONNRESET, as when a service dies."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()
