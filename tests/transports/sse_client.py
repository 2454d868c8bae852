"""
A small HTTP + SSE client for tests that must see the wire: ``http.client`` with timeouts and an
incremental ``text/event-stream`` parser (event ids, data, comments), plus session helpers for the
legacy Streamable HTTP transport (``LegacySession``) and the 2024-11-05 HTTP+SSE transport
(``SseSession``).
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.live import LiveServer


SOCKET_TIMEOUT = 15.0
WAIT = 15.0
LEGACY = "2025-11-25"
JSON = "application/json"
SSE = "text/event-stream"
POST_HEADERS = {"Content-Type": JSON, "Accept": f"{JSON}, {SSE}"}


class SSEStream:
    """An open ``text/event-stream`` response, read one event at a time."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self.connection = connection
        self.response = response
        self.comments = 0
        # The text of every comment line read (e.g. ``: ping - 2026-01-01 12:00:00``).
        self.comment_lines: list[str] = []
        # The raw lines (line ends stripped) of the last event returned by next_event(), with the
        # blank line that ended it: what the wire carried, for tests that check the framing.
        self.last_lines: list[str] = []

    def next_event(self, deadline: float, *, idle: bool = False) -> dict[str, str] | None:
        """
        The next event (``data``, ``id``, ``event``), or None when the stream ends. With ``idle``,
        a keep-alive comment counts as an empty event, so callers regain control every 2 s.
        """
        fields: dict[str, list[str]] = {}
        lines: list[str] = []
        while True:
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for an SSE event")
            # HTTPResponse.readline() undoes the chunked transfer coding (resp.fp would not).
            raw = self.response.readline()
            if not raw:
                return None
            line = raw.decode("utf-8").rstrip("\r\n")
            lines.append(line)
            if not line:
                if fields or idle:
                    self.last_lines = lines
                    return {name: "\n".join(values) for name, values in fields.items()}
                lines = []
                continue
            if line.startswith(":"):
                self.comments += 1
                self.comment_lines.append(line)
                continue
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)

    def next_message(self, timeout: float = WAIT) -> dict[str, Any]:
        """The next JSON-RPC message (events without data, e.g. priming events, are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            event = self.next_event(deadline)
            if event is None:
                raise AssertionError("the SSE stream ended before the expected message")
            if event.get("data"):
                return json.loads(event["data"])

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = WAIT) -> tuple[
            dict[str, Any], list[dict[str, Any]]]:
        """Read until a message matches; returns it and the messages skipped on the way."""
        deadline = time.monotonic() + timeout
        skipped = []
        while True:
            message = self.next_message(max(0.0, deadline - time.monotonic()))
            if predicate(message):
                return message, skipped
            skipped.append(message)

    def collect(self, seconds: float) -> tuple[list[dict[str, Any]], bool]:
        """
        Every message that arrives within ``seconds`` (keep-alive comments, every 2 s, bound the
        overshoot) and whether the stream ended meanwhile.
        """
        deadline = time.monotonic() + seconds
        messages = []
        while time.monotonic() < deadline:
            event = self.next_event(deadline + SOCKET_TIMEOUT, idle=True)
            if event is None:
                return messages, True
            if event.get("data"):
                messages.append(json.loads(event["data"]))
        return messages, False

    def read_to_end(self, timeout: float = WAIT) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        messages = []
        while (event := self.next_event(deadline)) is not None:
            if event.get("data"):
                messages.append(json.loads(event["data"]))
        return messages

    def close(self) -> None:
        self.connection.close()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any = None
    stream: SSEStream | None = None
    # The undecoded body (empty for SSE responses, which are handed back open).
    raw: bytes = b""

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()


def request(server: LiveServer, method: str, message: Any = None, headers: Mapping[str, str] | None = None) -> Reply:
    """
    One HTTP request. A JSON body is read and decoded; an SSE response is handed back open
    (``reply.stream``) for the caller to read and close.
    """
    body = None if message is None else json.dumps(message).encode()
    all_headers = {**(POST_HEADERS if method == "POST" else {}), **(headers or {})}
    return send(server, method, "/mcp", body, all_headers)


def send(server: LiveServer, method: str, target: str, body: bytes | None = None,
         headers: Mapping[str, str] | None = None) -> Reply:
    """
    One HTTP request to any ``target`` (path and query) with a raw body and exactly the given
    headers (``http.client`` adds ``Host`` unless one is given, and ``Content-Length``). A JSON
    body is decoded into ``reply.body``, every body is kept in ``reply.raw``; an SSE response is
    handed back open (``reply.stream``).
    """
    connection = http.client.HTTPConnection(server.host, server.port, timeout=SOCKET_TIMEOUT)
    connection.request(method, target, body=body, headers=dict(headers or {}))
    response = connection.getresponse()
    reply = Reply(response.status, {name.lower(): value for name, value in response.getheaders()})
    if reply.content_type == SSE:
        reply.stream = SSEStream(connection, response)
        return reply
    raw = response.read()
    connection.close()
    reply.raw = raw
    if raw and reply.content_type == JSON:
        reply.body = json.loads(raw)
    return reply


def call(server: LiveServer, message: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
    """POST a request and return its JSON-RPC response, whether it came as JSON or over SSE."""
    reply = request(server, "POST", message, headers)
    assert reply.status == 200, (reply.status, reply.body)
    if reply.stream is None:
        return reply.body
    try:
        response, _ = reply.stream.wait_for(lambda m: m.get("id") == message["id"] and "method" not in m)
        return response
    finally:
        reply.stream.close()


@dataclass
class LegacySession:
    """A 2025-11-25 session (MCP spec 2025-11-25, basic/transports#streamable-http): ``initialize`` once, then ``Mcp-Session-Id`` everywhere."""

    id: str
    capabilities: dict[str, Any]
    next_id: Iterator[int] = field(default_factory=lambda: iter(range(2, 10**6)))

    version: str = LEGACY

    @classmethod
    def start(cls, server: LiveServer, *, initialized_on: LiveServer | None = None,
              client_capabilities: dict[str, Any] | None = None, version: str = LEGACY) -> LegacySession:
        reply = request(server, "POST", {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": client_capabilities or {},
                       "clientInfo": {"name": "multi-worker-test", "version": "1.0"}},
        })
        assert reply.status == 200, (reply.status, reply.body)
        assert reply.body["result"]["protocolVersion"] == version
        session_id = reply.headers.get("mcp-session-id")
        assert session_id, reply.headers
        session = cls(session_id, reply.body["result"]["capabilities"], version=version)
        initialized = request(initialized_on or server, "POST",
                              {"jsonrpc": "2.0", "method": "notifications/initialized"}, session.headers())
        assert initialized.status == 202, (initialized.status, initialized.body)
        return session

    def headers(self) -> dict[str, str]:
        return {"Mcp-Session-Id": self.id, "MCP-Protocol-Version": self.version}

    def message(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.next_id), "method": method}
        if params is not None:
            message["params"] = params
        return message

    def call(self, server: LiveServer, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return call(server, self.message(method, params), self.headers())

    def open_get_stream(self, server: LiveServer) -> SSEStream:
        """The standalone GET stream (MCP spec 2025-11-25, basic/transports#streamable-http); returns once the server has answered with SSE."""
        reply = request(server, "GET", headers={"Accept": SSE, **self.headers()})
        assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
        return reply.stream


# --- the 2024-11-05 HTTP+SSE transport (MCP spec 2024-11-05, basic/transports#http-with-sse) -------------------------------------------


SSE_VERSION = "2024-11-05"


@dataclass
class SseSession:
    """
    A 2024-11-05 HTTP+SSE session (MCP spec 2024-11-05, basic/transports#http-with-sse): ``GET /sse`` holds the stream, whose first event
    (``endpoint``) names the URL every client message is POSTed to; answers arrive on the stream.
    """

    stream: SSEStream
    headers: dict[str, str]
    endpoint: str
    endpoint_lines: list[str]
    next_id: Iterator[int] = field(default_factory=lambda: iter(range(1, 10**6)))

    @property
    def session_id(self) -> str:
        return self.endpoint.partition("session_id=")[2]

    @classmethod
    def open(cls, server: LiveServer, path: str = "/sse", headers: Mapping[str, str] | None = None) -> SseSession:
        """GET the stream and read the ``endpoint`` event (the first thing on it)."""
        reply = send(server, "GET", path, headers={"Accept": SSE, **(headers or {})})
        assert reply.status == 200 and reply.stream is not None, (reply.status, reply.headers, reply.body)
        event = reply.stream.next_event(time.monotonic() + WAIT)
        assert event is not None and event.get("event") == "endpoint", event
        return cls(reply.stream, reply.headers, event["data"], list(reply.stream.last_lines))

    def message(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.next_id), "method": method}
        if params is not None:
            message["params"] = params
        return message

    def post_raw(self, server: LiveServer, body: bytes, headers: Mapping[str, str] | None = None,
                 target: str | None = None) -> Reply:
        """POST bytes to the endpoint (or to ``target``) on ``server``."""
        return send(server, "POST", target or self.endpoint, body, {"Content-Type": JSON, **(headers or {})})

    def post(self, server: LiveServer, message: Any, headers: Mapping[str, str] | None = None) -> Reply:
        """POST one JSON-RPC message (or a batch); the server answers 202 and replies on the stream."""
        return self.post_raw(server, json.dumps(message).encode(), headers)

    def accepted(self, server: LiveServer, message: Any) -> None:
        reply = self.post(server, message)
        assert reply.status == 202 and reply.raw == b"Accepted", (reply.status, reply.raw)

    def call(self, server: LiveServer, method: str, params: dict[str, Any] | None = None,
             timeout: float = WAIT) -> dict[str, Any]:
        """POST a request (202) and return its response from the stream, skipping other messages."""
        message = self.message(method, params)
        self.accepted(server, message)
        response, _ = self.stream.wait_for(lambda m: m.get("id") == message["id"] and "method" not in m, timeout)
        return response

    def initialize(self, server: LiveServer, version: str = SSE_VERSION,
                   capabilities: dict[str, Any] | None = None, *, initialized_on: LiveServer | None = None
                   ) -> dict[str, Any]:
        """``initialize`` then ``notifications/initialized``; returns the initialize result."""
        response = self.call(server, "initialize", {
            "protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "legacy-sse-test", "version": "1.0"}})
        assert "result" in response, response
        self.accepted(initialized_on or server, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response["result"]

    def close(self) -> None:
        self.stream.close()
