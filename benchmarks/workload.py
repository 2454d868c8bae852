"""
What the benchmark sends, and a tiny blocking HTTP/1.1 client for set-up, checks and idle streams.

The requests are exactly what the team's measurement uses (benchmarks/README.md): a 2026-07-28
stateless ``tools/call echo`` with its ``_meta`` envelope and mirrored headers, and the same call in
a 2025-11-25 legacy session. A plain-socket client (not ``http.client``) because the memory
measurement must hold hundreds of connections open in a chosen state, and the checks must see the
raw status line and body the load generator will see.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field

from .servers import HOST

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT_BOTH = "application/json, text/event-stream"

# Substrings every timed response must contain (besides status 200). The baseline's fixed answer
# contains them too, so one check fits all three modes.
EXPECT = ['"result"', '"isError":false', '"text":"hi"']

_ECHO = {"name": "echo", "arguments": {"text": "hi"}}

# The JSON-RPC id of a numbered request (``Spec.numbered``): the load generators replace it with
# their own counter, which starts here, so every replay carries another id of the same width (the
# Content-Length holds) for the next 9e9 requests.
FIRST_ID = 1_000_000_000


@dataclass
class Spec:
    """One request as the load generators replay it, and what its answer must contain."""

    method: str
    path: str
    headers: dict[str, str]
    body: str = ""
    expect: list[str] = field(default_factory=lambda: list(EXPECT))
    # Each replay needs its own JSON-RPC id: the body's ``"id":FIRST_ID`` is the template.
    numbered: bool = False

    def raw(self, port: int) -> bytes:
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: {HOST}:{port}"]
        lines += [f"{name}: {value}" for name, value in self.headers.items()]
        body = self.body.encode()
        if self.method != "GET":
            lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _dumps(payload: object) -> str:
    return json.dumps(payload, separators=(",", ":"))


def modern_call(tool: str = "echo") -> Spec:
    params = {**_ECHO, "name": tool, "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                                               "io.modelcontextprotocol/clientCapabilities": {}}}
    return Spec("POST", "/mcp", {
        "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool,
        "Accept": ACCEPT_BOTH, "Content-Type": "application/json",
    }, _dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))


def legacy_call(session_id: str, numbered: bool = False, tool: str = "echo") -> Spec:
    """
    tools/call echo in a legacy session. ``numbered``: for the load generators, which then give
    every request its own id. Concurrent requests of one session must not share an id (MCP forbids
    reusing one in a session at all): the SDK routes answers by id, and 32 connections replaying
    ``"id":1`` leave all but one waiting forever for an answer delivered elsewhere.
    """
    request_id = FIRST_ID if numbered else 1
    return Spec("POST", "/mcp", _legacy_headers(session_id),
                _dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {**_ECHO, "name": tool}}),
                numbered=numbered)


def baseline_call() -> Spec:
    # Same body and headers as the modern call: the bare consumer reads and ignores them.
    return modern_call()


def initialize() -> Spec:
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    return Spec("POST", "/mcp", {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"},
                _dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}),
                expect=['"protocolVersion"'])


def initialized(session_id: str) -> Spec:
    return Spec("POST", "/mcp", _legacy_headers(session_id),
                _dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), expect=[])


def tools_list(session_id: str) -> Spec:
    return Spec("POST", "/mcp", _legacy_headers(session_id),
                _dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), expect=['"name":"echo"'])


def delete_session(session_id: str) -> Spec:
    return Spec("DELETE", "/mcp", {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}, expect=[])


def session_stream(session_id: str | None) -> Spec:
    headers = {"Accept": "text/event-stream"}
    if session_id:
        headers.update({"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY})
    return Spec("GET", "/mcp", headers, expect=[])


def _legacy_headers(session_id: str) -> dict[str, str]:
    return {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY,
            "Accept": ACCEPT_BOTH, "Content-Type": "application/json"}


class Response:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def problem(self, spec: Spec, status: int = 200) -> str | None:
        """Why this is not the answer ``spec`` expects, or None."""
        text = self.body.decode("utf-8", "replace")
        if self.status != status:
            return f"status {self.status}, body {text[:300]!r}"
        missing = [part for part in spec.expect if part not in text]
        return f"body lacks {missing}: {text[:300]!r}" if missing else None


class Client:
    """One keep-alive connection to a server under test, blocking, with a timeout on every read."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.port = port
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.buffer = b""

    def close(self) -> None:
        self.sock.close()

    def send(self, spec: Spec) -> Response:
        """Send ``spec`` and read one whole response (Content-Length or chunked)."""
        self.sock.sendall(spec.raw(self.port))
        status, headers = self._head()
        if "content-length" in headers:
            body = self._exactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._chunked()
        else:
            body = b""
        return Response(status, headers, body)

    def open_stream(self, spec: Spec) -> Response:
        """Send a GET and read only the head and the first bytes of the stream; leave it open."""
        self.sock.sendall(spec.raw(self.port))
        status, headers = self._head()
        first = self.buffer or self.sock.recv(65536)
        self.buffer = b""
        return Response(status, headers, first)

    def _head(self) -> tuple[int, dict[str, str]]:
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(lines[0].split()[1]), headers

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buffer += chunk

    def _exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _chunked(self) -> bytes:
        body = b""
        while True:
            while b"\r\n" not in self.buffer:
                self._fill()
            size_line, self.buffer = self.buffer.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            chunk = self._exactly(size + 2)[:-2]
            if size == 0:
                return body
            body += chunk


def new_session(port: int, client: Client | None = None) -> str:
    """A legacy session, initialized as a client would; returns its id."""
    own = client is None
    client = client or Client(port)
    try:
        spec = initialize()
        response = client.send(spec)
        problem = response.problem(spec)
        session_id = response.headers.get("mcp-session-id")
        if problem or not session_id:
            raise RuntimeError(f"initialize failed: {problem or 'no Mcp-Session-Id'}")
        done = client.send(initialized(session_id))
        if done.status != 202:
            raise RuntimeError(f"notifications/initialized got {done.status}")
        return session_id
    finally:
        if own:
            client.close()


def check(port: int, spec: Spec, times: int = 3) -> str | None:
    """Send ``spec`` ``times`` over one keep-alive connection; the first problem found, or None."""
    client = Client(port)
    try:
        for _ in range(times):
            problem = client.send(spec).problem(spec)
            if problem:
                return problem
        return None
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        client.close()
