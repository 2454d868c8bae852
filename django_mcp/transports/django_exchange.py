"""
One HTTP exchange of the MCP endpoint, served from a Django ``HttpRequest`` instead of an ASGI
connection: what lets the endpoint be a plain Django view (:mod:`django_mcp.views`).

The consumer that serves ``/mcp`` under Channels (:class:`~django_mcp.transports.http.McpHttpConsumer`)
is an ASGI application. Here it is given an ASGI scope made from the request, the body Django
has already received, and a ``send`` that collects what it answers; that becomes an
``HttpResponse``, or a ``StreamingHttpResponse`` when the consumer streams (SSE), so every check,
error and status code is the same on both endpoints. When the response stream ends — the client
left, or Django stopped iterating — the consumer is told ``http.disconnect``, as a server would.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import SyncToAsync
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

from ..conf import mcp_settings
from . import constants

logger = logging.getLogger("django_mcp.transports")

# Consumers still finishing after their response went out (a stream's teardown): asyncio keeps
# only weak references to tasks, and one collected mid-run would never leave its groups.
_finishing: set[asyncio.Task[Any]] = set()

# Headers Django computes itself, or that no server may pass on (RFC 9110 section 7.6.1).
_NOT_COPIED = frozenset({"content-length", "connection", "transfer-encoding"})


def asgi_scope(request: HttpRequest) -> dict[str, Any]:
    """
    An ASGI HTTP scope for ``request``. Under an ASGI server, the server's own (headers exactly as
    sent, repeated ones included); under WSGI, one made from ``request.META``, whose repeated
    headers the WSGI server has already joined with commas. The scheme is Django's
    ``request.scheme``, so ``SECURE_PROXY_SSL_HEADER`` counts for the Origin check as it does for
    Django's CSRF check.
    """
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and scope.get("type") == "http":
        return {**scope, "scheme": request.scheme}
    meta = request.META
    headers = []
    for key, value in meta.items():
        if key.startswith("HTTP_"):
            name = key[5:]
        elif key in ("CONTENT_TYPE", "CONTENT_LENGTH") and value:
            name = key
        else:
            continue
        # PEP 3333: environ strings are latin-1 decodings of the bytes sent.
        headers.append((name.replace("_", "-").lower().encode("latin-1"), str(value).encode("latin-1")))
    server_port = meta.get("SERVER_PORT")
    if "HTTP_HOST" not in meta:
        # HTTP/1.0 may leave Host out; Django then names the server as WSGI describes it (PEP 3333,
        # "URL Reconstruction"), and so does the scope, so the Host check sees what Django sees.
        default_port = "443" if request.scheme == "https" else "80"
        host = str(meta.get("SERVER_NAME") or "")
        if server_port and str(server_port) != default_port:
            host = f"{host}:{server_port}"
        headers.append((b"host", host.encode("latin-1")))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": str(meta.get("SERVER_PROTOCOL", "HTTP/1.1")).partition("/")[2] or "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "root_path": meta.get("SCRIPT_NAME", ""),
        "query_string": str(meta.get("QUERY_STRING", "")).encode("latin-1"),
        "headers": headers,
        "client": (meta.get("REMOTE_ADDR") or "", int(meta.get("REMOTE_PORT") or 0)),
        "server": (meta.get("SERVER_NAME") or "", int(server_port) if str(server_port or "").isdigit() else 0),
    }


def read_body(request: HttpRequest) -> bytes:
    """
    The request body, at most one byte past ``MAX_REQUEST_BODY_SIZE`` (so the consumer can refuse
    it with 413, not read all of it). A body announced larger is not read at all: the consumer
    refuses it from its ``Content-Length``. Read from the stream, not ``request.body``, whose
    ``DATA_UPLOAD_MAX_MEMORY_SIZE`` check would answer a large MCP body with Django's 400 page.
    """
    if request.method != "POST":
        return b""
    limit = mcp_settings.MAX_REQUEST_BODY_SIZE
    length = request.META.get("CONTENT_LENGTH")
    if length and str(length).isdigit() and int(length) > limit:
        return b""
    return request.read(limit + 1)


class Exchange:
    """
    The ASGI side of one exchange: ``receive`` hands over the body and then waits for the end;
    ``send`` collects the response, which :meth:`next_chunk` reads.
    """

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.body_given = False
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: deque[tuple[bytes, bool]] = deque()
        # Set when a chunk arrives or the consumer ends: one waiter, no task per chunk.
        self.arrived = asyncio.Event()
        self.ended = asyncio.get_running_loop().create_future()

    async def receive(self) -> dict[str, Any]:
        if not self.body_given:
            self.body_given = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await asyncio.shield(self.ended)
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers") or ())
        elif kind == "http.response.body":
            self.chunks.append((message.get("body", b""), bool(message.get("more_body", False))))
            self.arrived.set()

    def run(self, consumer: Any, scope: dict[str, Any]) -> asyncio.Task[Any]:
        """
        Start ``consumer`` on this exchange, outside the ``ThreadSensitiveContext`` Django's ASGI
        handler opens for each request: the consumer opens its own around each MCP request's work
        (``transports/requests.py``), as under Channels, and its own queries then run where they
        do there. In Django's context every query of the exchange would run on a thread made for
        the request, and on SQLite open a connection there that outlives the thread.
        """
        context = contextvars.copy_context()
        context.run(SyncToAsync.thread_sensitive_context.set, None)
        task = asyncio.get_running_loop().create_task(consumer(scope, self.receive, self.send), context=context)
        task.add_done_callback(lambda _: self.arrived.set())
        return task

    async def next_chunk(self, task: asyncio.Task[Any]) -> tuple[bytes, bool] | None:
        """The next body chunk the consumer sends; None if it ends first (its error is raised)."""
        while not self.chunks:
            if task.done():
                if not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
                return None
            self.arrived.clear()
            await self.arrived.wait()
        return self.chunks.popleft()

    def end(self) -> None:
        """The response will not be read any further: the consumer sees ``http.disconnect``."""
        if not self.ended.done():
            self.ended.set_result(None)


async def serve(consumer: Any, request: HttpRequest, scope: dict[str, Any], body: bytes, *,
                stream: bool) -> HttpResponseBase:
    """
    Run ``consumer`` (an ASGI application) for one request and return its answer as a Django
    response. With ``stream``, an answer the consumer streams becomes a ``StreamingHttpResponse``
    read as it comes; without, the whole stream is awaited (a WSGI server would hold a thread
    for it all the same).
    """
    exchange = Exchange(body)
    task = exchange.run(consumer, scope)
    first = await exchange.next_chunk(task)
    if first is None:
        # The consumer ended without answering: a bug, never the client's fault; its log has it.
        logger.error("The MCP endpoint sent no response to %s %s", request.method, request.path)
        return _response(HttpResponse(status=500), [(b"content-type", constants.CONTENT_TYPE_JSON.encode())])
    chunk, more = first
    if not more:
        exchange.end()
        await task
        return _response(HttpResponse(chunk, status=exchange.status), exchange.headers)
    if not stream:
        parts = [chunk]
        while more:
            following = await exchange.next_chunk(task)
            if following is None:
                break
            chunk, more = following
            parts.append(chunk)
        exchange.end()
        await task
        return _response(HttpResponse(b"".join(parts), status=exchange.status), exchange.headers)
    response = StreamingHttpResponse(_Stream(exchange, task, chunk), status=exchange.status)
    return _response(response, exchange.headers)


class _Stream:
    """
    A streamed answer as Django reads it. Django stops reading at a client's disconnect by
    cancelling the task that reads (which ends :func:`_stream` at once, if it waits there), and
    closes the response when it is done with it, from a thread: :meth:`close` then tells the
    consumer, in case the reading stopped between two chunks.
    """

    def __init__(self, exchange: Exchange, task: asyncio.Task[Any], first: bytes) -> None:
        self.exchange = exchange
        self.iterator = _stream(exchange, task, first)
        self.loop = asyncio.get_running_loop()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self.iterator

    def close(self) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.exchange.end)


async def _stream(exchange: Exchange, task: asyncio.Task[Any], first: bytes) -> AsyncIterator[bytes]:
    """The rest of a streamed answer; closing it (the client left) disconnects the consumer."""
    try:
        yield first
        while True:
            following = await exchange.next_chunk(task)
            if following is None:
                return
            chunk, more = following
            if chunk:
                yield chunk
            if not more:
                return
    finally:
        exchange.end()
        if not task.done():
            _finishing.add(task)
            task.add_done_callback(_finishing.discard)


def _response(response: HttpResponseBase, headers: list[tuple[bytes, bytes]]) -> HttpResponseBase:
    if not any(name.lower() == b"content-type" for name, _ in headers):
        del response.headers["Content-Type"]  # a 202 has no body, and no type of Django's either
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        if name in _NOT_COPIED:
            continue
        value = raw_value.decode("latin-1")
        if name in response.headers and name != "content-type":
            value = f"{response.headers[name]}, {value}"  # a repeated header, as one (RFC 9110 section 5.3)
        response.headers[name] = value
    return response
