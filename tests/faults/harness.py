"""
What the fault tests share: workers started on the faults' settings, the logs they watch for
unhandled exceptions, a worker's memory, the in-flight probe, 2026-07-28 requests, and reading a
stream with every wait bounded.

Every wait here has a deadline; sockets have timeouts (``tests/transports/sse_client.py``), and
the workers send a keep-alive comment every second, so a deadline is checked at least that often
even on a stream that carries nothing.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from tests.faults.ledger import LEDGER
from tests.live import LiveServer, LiveServerError
from tests.transports.sse_client import SSE, LegacySession, Reply, SSEStream, request

SETTINGS = "tests.faults.settings"
MODERN = "2026-07-28"
# Seconds between keep-alive comments: how often a reader regains control on a quiet stream.
KEEPALIVE = "1"
# What a test waits for anything that should come "at once": generous for a loaded 2-core box.
PROMPT = 5.0


def fault_env(services: Mapping[str, str], **extra: str) -> dict[str, str]:
    """The workers' environment: the ``services`` database and Redis prefix, the faults' settings."""
    return {**services, "DJANGO_SETTINGS_MODULE": SETTINGS, "MCP_TEST_KEEPALIVE": KEEPALIVE, **extra}


@contextmanager
def workers(env: Mapping[str, str], *names: str) -> Iterator[list[LiveServer]]:
    """Start one daphne worker per name, in parallel (each takes seconds to import Django)."""
    servers = [LiveServer(env=env, name=name) for name in names]
    errors: list[BaseException] = []

    def start(server: LiveServer) -> None:
        try:
            server.start()
        except (LiveServerError, OSError) as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(server,)) for server in servers]
    with ExitStack() as stack:
        for server in servers:
            stack.callback(server.stop)
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        if errors:
            raise errors[0]
        yield servers


def describe(*servers: LiveServer) -> str:
    return "\n".join(f"{server.name}: {server.url} log {server.log_path}" for server in servers)


# --- logs ----------------------------------------------------------------------------------------

# What a worker logs when an exception escapes. daphne: the ASGI application raised, and the
# client got daphne's bare HTML 500 — a test fails on that. asyncio: a background task failed and
# nobody looked — racy by nature, so it is counted for the run's summary instead (LEDGER.notes).
ANSWERED_500 = "Exception inside application"
LOST_TASK = "Task exception was never retrieved"
LEFT_IN_GROUP = "Could not leave channel group"
UNHANDLED = (ANSWERED_500,)


class LogWatch:
    """The part of the workers' logs written since ``mark()``, searched for unhandled exceptions."""

    def __init__(self, *servers: LiveServer) -> None:
        self.servers = servers
        self.offsets: dict[str, int] = {}
        self.mark()

    def mark(self) -> None:
        for server in self.servers:
            self.offsets[server.name] = _size(server)

    def since_mark(self, server: LiveServer) -> str:
        if server.log_path is None:
            return ""
        with open(server.log_path, "rb") as log:
            log.seek(self.offsets.get(server.name, 0))
            return log.read().decode("utf-8", "replace")

    def check(self) -> None:
        """Fail on an exception answered as a 500; note failed background tasks for the summary."""
        for server in self.servers:
            lines = self.since_mark(server).splitlines()
            for index, line in enumerate(lines):
                if LOST_TASK in line and index + 1 < len(lines):
                    found = _TASK.search(lines[index + 1])
                    LEDGER.note(f"background task {found.group(1)} died: {found.group(2)[:120]}" if found
                                else lines[index + 1][:160])
                elif LEFT_IN_GROUP in line and "WARNING" in line:
                    # A channel left in a group gets that group's messages until the group expires.
                    error = next((later for later in lines[index + 1:index + 40] if later[:1].isalpha()
                                  and "Error" in later.partition(":")[0]), "")
                    LEDGER.note(f"cleanup could not leave a group: {error[:120]}")
        unhandled = self.unhandled()
        assert unhandled == [], "\n\n".join(unhandled)

    def unhandled(self, markers: tuple[str, ...] = UNHANDLED) -> list[str]:
        """Each unhandled-exception report since the mark, with the lines after it."""
        found = []
        for server in self.servers:
            lines = self.since_mark(server).splitlines()
            for index, line in enumerate(lines):
                if any(marker in line for marker in markers):
                    found.append(f"[{server.name}] " + "\n".join(lines[index:index + 30]))
        return found


_TASK = re.compile(r"coro=<(\S+?)\(\).*exception=(.*)>$")


def _size(server: LiveServer) -> int:
    try:
        return server.log_path.stat().st_size if server.log_path else 0
    except OSError:
        return 0


# --- the worker process ------------------------------------------------------------------------------


def rss_mib(server: LiveServer) -> float:
    """The worker's resident memory in MiB (``VmRSS`` of the daphne process)."""
    with open(f"/proc/{server.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {server!r}")


def probe(server: LiveServer, session_id: str = "") -> dict[str, Any]:
    """The worker's in-flight bookkeeping (``tests/faults/mcp.py``), asked statelessly."""
    reply = modern(server, f"probe-{time.monotonic_ns()}", "tools/call",
                   {"name": "inflight_probe", "arguments": {"session_id": session_id}})
    response = json_answer(reply)
    assert "result" in response, response
    result = response["result"]
    return result.get("structuredContent") or json.loads(result["content"][0]["text"])


def settled(server: LiveServer, session_id: str, *, timeout: float = PROMPT, **expected: int) -> dict[str, int]:
    """Poll the probe until the session's counters equal ``expected``; the last reading."""
    deadline = time.monotonic() + timeout
    while True:
        reading = probe(server, session_id)
        if all(reading[name] == value for name, value in expected.items()) or time.monotonic() > deadline:
            return reading
        time.sleep(0.1)


# --- requests --------------------------------------------------------------------------------------


def modern(server: LiveServer, request_id: Any, method: str, params: dict[str, Any],
           progress: str | None = None) -> Reply:
    """A stateless 2026-07-28 request (MCP spec 2026-07-28, basic/transports/streamable-http)."""
    meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                            "io.modelcontextprotocol/clientCapabilities": {},
                            "io.modelcontextprotocol/clientInfo": {"name": "faults", "version": "1.0"}}
    if progress is not None:
        meta["progressToken"] = progress
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    return request(server, "POST", message, headers)


def json_answer(reply: Reply) -> dict[str, Any]:
    """The JSON-RPC answer of a reply, plain JSON or the last message of its SSE stream."""
    assert reply.status != 500, f"unhandled 500: {reply.raw[:500]!r}"
    if reply.stream is None:
        assert isinstance(reply.body, dict), (reply.status, reply.raw[:500])
        return reply.body
    try:
        messages = reply.stream.read_to_end(PROMPT * 2)
    finally:
        reply.stream.close()
    assert messages, "the SSE answer ended without a message"
    return messages[-1]


def echo_ok(server: LiveServer, text: str = "still serving") -> None:
    """A 2026-07-28 echo on ``server`` is answered, correctly, with 200."""
    reply = modern(server, f"echo-{time.monotonic_ns()}", "tools/call",
                   {"name": "echo", "arguments": {"text": text}})
    assert reply.status == 200, (reply.status, reply.raw[:500])
    answer = json_answer(reply)
    assert answer["result"]["content"][0]["text"] == text, answer


def tool_call(session: LegacySession, name: str, arguments: dict[str, Any], progress: str | None = None
              ) -> dict[str, Any]:
    """A ``tools/call`` request of a legacy session, with a progress token when given."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if progress is not None:
        params["_meta"] = {"progressToken": progress}
    return session.message("tools/call", params)


def resume(server: LiveServer, session: LegacySession, last_event_id: str) -> Reply:
    """GET with ``Last-Event-ID`` (MCP spec 2025-11-25, basic/transports#resumability-and-redelivery)."""
    return request(server, "GET", headers={"Accept": SSE, "Last-Event-ID": last_event_id, **session.headers()})


# --- streams ---------------------------------------------------------------------------------------


@dataclass
class Event:
    """
    One SSE event as read: its id (if any), its JSON-RPC message (None for a priming event, or
    for data that is not JSON, such as HTTP+SSE's ``endpoint`` event) and its raw data.
    """

    id: str | None
    message: dict[str, Any] | None
    data: str = ""

    @classmethod
    def of(cls, raw: dict[str, str]) -> Event:
        data = raw.get("data", "")
        message = json.loads(data) if data[:1] in ("{", "[") else None
        return cls(raw.get("id"), message, data)

    @property
    def seq(self) -> int:
        assert self.id is not None
        return int(self.id.rpartition(".")[2])


def next_event(stream: SSEStream, timeout: float = PROMPT) -> Event | None:
    """The next event with data or an id (keep-alives skipped); None at the end of the stream."""
    deadline = time.monotonic() + timeout
    while True:
        raw = stream.next_event(deadline, idle=True)
        if raw is None:
            return None
        if "id" in raw or raw.get("data"):
            return Event.of(raw)


def collect(stream: SSEStream, seconds: float) -> tuple[list[Event], bool]:
    """Events arriving within ``seconds``, and whether the stream ended (so the wait is bounded)."""
    deadline = time.monotonic() + seconds
    events: list[Event] = []
    while time.monotonic() < deadline:
        raw = stream.next_event(deadline + 2, idle=True)
        if raw is None:
            return events, True
        if "id" in raw or raw.get("data"):
            events.append(Event.of(raw))
    return events, False


def drop(stream: SSEStream) -> None:
    """Drop the connection abruptly (TCP reset), as a client whose network went away."""
    reset(stream.connection.sock)
    stream.close()


def reset(sock: socket.socket | None) -> None:
    """Close ``sock`` with a TCP reset (SO_LINGER 0) instead of an orderly FIN."""
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def progress_of(events: list[Event]) -> list[float]:
    return [e.message["params"]["progress"] for e in events
            if e.message is not None and e.message.get("method") == "notifications/progress"]
