"""
Streamable HTTP as a client speaks it, over an in-process :class:`~django_mcp.test.exchange.Exchange`:
the headers each revision asks for, a JSON or SSE answer read to its end, and the questions a
legacy server asks in the middle of a call answered with a POST of their own (MCP spec 2025-11-25,
basic/transports#sending-messages-to-the-server; 2026-07-28, basic/transports/streamable-http).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Any

from .errors import ErrorResponse, UnansweredRequest
from .exchange import Exchange, ServerEvents


Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
# A stream the server keeps closing without answering is a broken server, not one to follow forever.
MAX_RESUMPTIONS = 8


def header_value(value: Any) -> str:
    """
    A value for ``Mcp-Name`` or ``Mcp-Param-*``: integers in decimal, booleans as ``true``/``false``,
    a string as it is unless it is not plain visible ASCII (or looks like the wrapping), then
    ``=?base64?…?=`` (MCP spec 2026-07-28, basic/transports/streamable-http, "Value encoding").
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    plain = (all(0x20 <= ord(char) <= 0x7E for char in text) and text == text.strip()
             and not (text.startswith("=?base64?") and text.endswith("?=")))
    return text if plain else "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


class HttpTransport:
    """The HTTP side of the test client: where to send, as whom, and how to read what comes back."""

    def __init__(self, app: Any, path: str, *, host: str, timeout: float) -> None:
        self.app = app
        self.path = path
        self.host = host
        self.timeout = timeout
        #: Extra request headers (credentials), lower-case names.
        self.headers: dict[str, str] = {}
        self.cookies: SimpleCookie = SimpleCookie()
        #: ``(user, auth)`` forced on every request, or None.
        self.forced: tuple[Any, Any] | None = None
        #: Called with each notification as it arrives on a request's stream, or None.
        self.on_notification: Callable[[dict[str, Any]], Any] | None = None

    def request_headers(self, extra: dict[str, str]) -> list[tuple[bytes, bytes]]:
        headers = {"host": self.host, "content-type": "application/json",
                   "accept": "application/json, text/event-stream", **self.headers, **extra}
        if self.cookies:
            headers["cookie"] = "; ".join(f"{morsel.key}={morsel.coded_value}" for morsel in self.cookies.values())
        return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    def exchange(self, method: str, headers: dict[str, str], body: bytes = b"") -> Exchange:
        scope = {}
        if self.forced is not None:
            from ..authentication import FORCED_AUTHENTICATION

            scope[FORCED_AUTHENTICATION] = self.forced
        return Exchange(self.app, method, self.path, self.request_headers(headers), body, extra_scope=scope)

    async def send(self, message: dict[str, Any], headers: dict[str, str], *,
                   ask: Ask | None = None) -> tuple[dict[str, Any] | None, list[dict[str, Any]], Exchange]:
        """
        POST ``message``; the JSON-RPC response (None for a notification or response: 202) and the
        notifications that came before it. A server's question on the stream is answered through
        ``ask`` (legacy era) with a POST of the answer. An HTTP refusal or a JSON-RPC error raises
        :class:`ErrorResponse`; so does a response that never comes.
        """
        exchange = self.exchange("POST", headers, json.dumps(message).encode())
        try:
            await exchange.start(self.timeout)
            if exchange.status == 202:
                await exchange.body(self.timeout)
                return None, [], exchange
            if exchange.content_type == "text/event-stream" and exchange.status == 200:
                response, notifications = await self._read_stream(exchange, message, headers, ask)
            else:
                response, notifications = self._parse_json(exchange, await exchange.body(self.timeout), message), []
        finally:
            await exchange.close(self.timeout)
        if exchange.status >= 400 or "error" in response:
            raise error_from(response, exchange, message.get("method"))
        return response, notifications, exchange

    async def _read_stream(self, exchange: Exchange, message: dict[str, Any], headers: dict[str, str],
                           ask: Ask | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        events = ServerEvents(exchange, self.timeout)
        try:
            return await self._read_events(events, message, headers, ask)
        finally:
            if events.exchange is not exchange:  # a resumed stream's GET
                await events.exchange.close(self.timeout)

    async def _read_events(self, events: ServerEvents, message: dict[str, Any], headers: dict[str, str],
                           ask: Ask | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        exchange = events.exchange
        notifications: list[dict[str, Any]] = []
        unanswered: UnansweredRequest | None = None
        resumptions = 0
        while True:
            received = await events.next_message()
            if received is None:
                # A legacy server may close the stream before it answers, for the client to resume it.
                if events.last_event_id is None or ask is None or resumptions >= MAX_RESUMPTIONS:
                    raise ErrorResponse(None, "The server ended its event stream without answering the request",
                                        status=exchange.status, headers=exchange.headers,
                                        method=message.get("method"))
                resumptions += 1
                await self._resume(events, headers)
                continue
            if "method" in received and "id" in received:  # the server asks something
                answer: dict[str, Any] = {"jsonrpc": "2.0", "id": received["id"]}
                try:
                    if ask is None:
                        raise UnansweredRequest(f"The server asked {received['method']} on a 2026-07-28 stream, "
                                                "where it may not ask anything")
                    answer["result"] = await ask(received["method"], received.get("params") or {})
                except UnansweredRequest as exc:
                    # Told, the server stops waiting; the test fails once the call has ended.
                    unanswered = unanswered or exc
                    answer["error"] = {"code": -32603, "message": "The test gave no answer"}
                await self.send(answer, headers)
            elif "method" in received:
                notifications.append(received)
                if self.on_notification is not None:
                    self.on_notification(received)
            elif received.get("id") == message.get("id"):
                if unanswered is not None:
                    raise unanswered
                return received, notifications

    async def _resume(self, events: ServerEvents, headers: dict[str, str]) -> None:
        """
        GET the stream again from its last event (MCP spec 2025-11-25,
        basic/transports#resumability-and-redelivery).
        """
        await events.exchange.close(self.timeout)
        if events.retry_ms:
            await asyncio.sleep(min(events.retry_ms / 1000, self.timeout))
        resumed = self.exchange("GET", {**headers, "accept": "text/event-stream",
                                        "last-event-id": events.last_event_id or ""})
        await resumed.start(self.timeout)
        if resumed.status != 200 or resumed.content_type != "text/event-stream":
            body = await resumed.body(self.timeout)
            await resumed.close(self.timeout)
            raise error_from(self._parse_json(resumed, body, {}), resumed, "GET (resuming a stream)")
        events.resume_on(resumed)

    def _parse_json(self, exchange: Exchange, body: bytes, message: dict[str, Any]) -> dict[str, Any]:
        if not body:
            return {}
        try:
            parsed = json.loads(body)
        except ValueError:
            raise ErrorResponse(None, f"The server answered {body[:200]!r}, not JSON", status=exchange.status,
                                headers=exchange.headers, method=message.get("method")) from None
        return parsed if isinstance(parsed, dict) else {"result": parsed}


def error_from(response: dict[str, Any], exchange: Exchange, method: str | None) -> ErrorResponse:
    """The :class:`ErrorResponse` for an error answer (a JSON-RPC error, an HTTP refusal, or both)."""
    error = response.get("error") if isinstance(response.get("error"), dict) else {}
    message = error.get("message") or f"HTTP {exchange.status}"
    return ErrorResponse(error.get("code"), message, error.get("data"), status=exchange.status,
                         headers=exchange.headers, method=method)
