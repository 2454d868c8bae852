"""
The stream change notifications come on, held open while an async test changes things:
``subscriptions/listen`` in 2026-07-28 (MCP spec 2026-07-28, basic/patterns/subscriptions), the
session's GET stream with ``resources/subscribe`` in a legacy session (MCP spec 2025-11-25,
basic/transports#listening-for-messages-from-the-server).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..protocol.versions import Era
from ..threads import on_callers_connection
from .errors import NoAnswer
from .exchange import Exchange, ServerEvents
from .transport import error_from

# The stream is held for as long as the test wants: its reader waits without a bound, the test's
# own waits (next()) are bounded by the client's timeout.
FOREVER = 10 ** 9


class Subscription:
    """
    An open notification stream (``async with client.listen(...) as stream``). ``received`` holds
    every notification so far; :meth:`next` waits for the next one (of a given method).

    :meth:`McpClient.listen <django_mcp.test.McpClient.listen>` makes it: ``client`` is the
    ``McpClient`` that opens the stream; ``tools``, ``prompts`` and ``resources`` ask for the
    list-changed notifications of those lists and ``uris`` for the updates of those resources.
    In 2026-07-28 they are the ``subscriptions/listen`` request's filter; a legacy session's GET
    stream carries whatever the session is sent, and each of ``uris`` is subscribed to with
    ``resources/subscribe`` on entry.
    """

    def __init__(self, client: Any, *, tools: bool, prompts: bool, resources: bool,
                 uris: tuple[str, ...]) -> None:
        self.client = client  # the McpClient that opened it
        self.filter = {"toolsListChanged": tools, "promptsListChanged": prompts,
                       "resourcesListChanged": resources, "resourceSubscriptions": list(uris)}
        self.uris = uris
        #: Every notification received, in order.
        self.received: list[dict[str, Any]] = []
        #: What the server acknowledged it will send (2026-07-28), from ``notifications/subscriptions/acknowledged``.
        self.acknowledged: dict[str, Any] | None = None
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._exchange: Exchange | None = None
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Subscription:
        client = self.client
        with on_callers_connection():
            if client.era is Era.LEGACY and client.server is None:
                await client.ainitialize()
            transport = client._ready_transport()
            if client.era is Era.MODERN:
                request_id = next(client._ids)
                message = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                           "params": {"notifications": {key: value for key, value in self.filter.items() if value}}}
                message["params"]["_meta"] = client.modern_meta()
                self._exchange = transport.exchange("POST", client._headers(message), json.dumps(message).encode())
            else:
                headers = {**client._headers(None), "accept": "text/event-stream"}
                self._exchange = transport.exchange("GET", headers)
            await self._exchange.start(client.timeout)
            if self._exchange.status != 200 or self._exchange.content_type != "text/event-stream":
                body = await self._exchange.body(client.timeout)
                await self._exchange.close(client.timeout)
                parsed = json.loads(body) if body.startswith(b"{") else {}
                raise error_from(parsed, self._exchange, "subscriptions/listen" if client.era is Era.MODERN else "GET")
            events = ServerEvents(self._exchange, FOREVER)
            if client.era is Era.MODERN:
                first = await asyncio.wait_for(events.next_message(), client.timeout)
                if first is None or first.get("method") != "notifications/subscriptions/acknowledged":
                    raise AssertionError(f"subscriptions/listen: the first message was {first!r}, "
                                         "not notifications/subscriptions/acknowledged")
                self.acknowledged = (first.get("params") or {}).get("notifications")
            self._reader = asyncio.ensure_future(self._read(events))
        if client.era is Era.LEGACY:
            for uri in self.uris:
                await client.asubscribe(uri)
        return self

    async def _read(self, events: ServerEvents) -> None:
        try:
            while (message := await events.next_message()) is not None:
                if "method" in message and "id" not in message:
                    self.received.append(message)
                    self._queue.put_nowait(message)
        finally:
            self._queue.put_nowait(None)  # the stream ended

    async def next(self, method: str | None = None, timeout: float | None = None) -> dict[str, Any]:
        """
        The next notification (the next named ``method``, skipping others), as sent:
        ``{"method": ..., "params": ...}``. :class:`~django_mcp.test.NoAnswer` when none comes
        within ``timeout`` (the client's by default) or the stream ended.
        """
        limit = self.client.timeout if timeout is None else timeout
        deadline = asyncio.get_running_loop().time() + limit
        while True:
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(self._queue.get(), max(remaining, 0))
            except asyncio.TimeoutError:
                raise NoAnswer(f"No {method or 'notification'} within {limit:g} s "
                               f"(received: {[m['method'] for m in self.received]})") from None
            if message is None:
                self._queue.put_nowait(None)
                raise NoAnswer(f"The stream ended before any {method or 'notification'} came")
            if method is None or message.get("method") == method:
                return message

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._exchange is not None:
            try:
                await self._exchange.close(self.client.timeout)
            finally:
                if self._reader is not None:
                    self._reader.cancel()
