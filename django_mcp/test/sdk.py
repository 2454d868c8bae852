"""
The official MCP Python SDK's client (``mcp``, 2.x) talking to the project in process, for teams
whose tests already speak the SDK::

    from mcp import Client
    from django_mcp.test import sdk_transport

    async with Client(sdk_transport(user=ada), mode="legacy") as client:
        result = await client.call_tool("search_books", {"query": "dune"})

The SDK's own Streamable HTTP client runs unchanged; only its HTTP client's transport is replaced
by one that hands each request to the project's ASGI application (as :class:`McpClient` does) and
streams the answer back as it comes, so SSE responses, the GET stream and ``subscriptions/listen``
work as over a socket. Needs the ``mcp`` package.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

from ..threads import on_callers_connection
from .application import flush_deferred, project_application
from .exchange import Exchange

# A stream is read for as long as the SDK reads it; the SDK's own timeouts bound each request.
FOREVER = 10 ** 9
# How long the application may take to start answering, or to finish once the SDK lets go.
START_TIMEOUT = 30.0


def sdk_transport(app: Any = None, *, path: str | None = None, host: str = "testserver", user: Any = None,
                  token: Any = None, scopes: Any = None, headers: dict[str, str] | None = None) -> Any:
    """
    A transport for ``mcp.Client`` that reaches ``app`` (default: the project's
    ``ASGI_APPLICATION``) in process at ``path`` (default ``DJANGO_MCP["MCP_PATH"]``), on the host
    ``host`` (the URL's, so the ``Host`` header of every request; default ``"testserver"``). ``user``,
    ``token`` and ``scopes`` force the identity of every request as
    :meth:`McpClient.force_authenticate <django_mcp.test.McpClient.force_authenticate>` does;
    ``headers`` are sent with every request (credentials for the project's authentication classes).
    """
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from .identity import ForcedCredential

    if path is None:
        from ..conf import mcp_settings

        path = "/" + mcp_settings.MCP_PATH.strip("/")
    forced = None
    if user is not None or token is not None:
        if user is None:
            from ..authentication import anonymous_user

            user = anonymous_user()
        forced = (user, token if token is not None else (ForcedCredential(scopes) if scopes is not None else None))
    transport = _classes()[0](app, forced)
    http_client = httpx2.AsyncClient(transport=transport, headers=headers or {}, timeout=httpx2.Timeout(30, read=300))
    return streamable_http_client(f"http://{host}{path}", http_client=http_client)


@functools.cache
def _classes() -> tuple[type, type]:
    """
    The transport and its response stream, made on first use: httpx2 is the SDK's dependency, not
    django_mcp's, so it is imported only by a test that uses the SDK.
    """
    import httpx2

    class ExchangeStream(httpx2.AsyncByteStream):
        """The body of a response, as the application sends it."""

        def __init__(self, exchange: Exchange) -> None:
            self.exchange = exchange

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.exchange.chunks(FOREVER):
                yield chunk

        async def aclose(self) -> None:
            await self.exchange.close(START_TIMEOUT)
            with on_callers_connection():
                await flush_deferred()

    class AsgiTransport(httpx2.AsyncBaseTransport):
        """An ``httpx2`` transport whose requests go to an ASGI application in this process."""

        def __init__(self, app: Any, forced: tuple[Any, Any] | None) -> None:
            self.app = app
            self.forced = forced

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            from ..authentication import FORCED_AUTHENTICATION

            app = self.app if self.app is not None else project_application()
            body = await request.aread()
            headers = [(name.lower(), value) for name, value in request.headers.raw]
            scope = {FORCED_AUTHENTICATION: self.forced} if self.forced is not None else {}
            with on_callers_connection():
                exchange = Exchange(app, request.method, request.url.path, headers, body, query=request.url.query,
                                    extra_scope=scope)
            await exchange.start(START_TIMEOUT)
            return httpx2.Response(exchange.status, headers=list(exchange.headers.items()),
                                   stream=ExchangeStream(exchange), request=request)

    return AsgiTransport, ExchangeStream
