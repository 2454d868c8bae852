"""
Driving stdio servers from tests: in process (``serve_lines``, a ``StdioServer`` fed a list of
messages) and as a real subprocess on raw pipes (``StdioProcess``), plus the JSON-RPC messages
both send.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from django_mcp.transports.lines import LineReader
from django_mcp.transports.stdio import StdioServer
from tests.live import ROOT, migrate, server_env


READ_TIMEOUT = 10  # seconds, for one message on a raw pipe
MODERN = "2026-07-28"


async def serve_lines(site: Any, user: Any, lines: list[dict[str, Any]], **server_options: Any) -> dict[Any, dict]:
    """Send ``lines`` (JSON-RPC messages) to a stdio server; its answers by request id."""
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    # A pipe kept open until every answer is out: end of input cancels requests still running.
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    output = io.BytesIO()
    with os.fdopen(read_fd, "rb") as stream:
        server = StdioServer(LineReader(stream, limit=1 << 20), output, user=user, site=site, **server_options)
        serving = asyncio.ensure_future(server.serve())
        try:
            async with asyncio.timeout(10):
                while output.getvalue().count(b"\n") < len(lines):
                    await asyncio.sleep(0.01)
        finally:
            os.close(write_fd)
            await asyncio.wait_for(serving, 10)
    return {answer["id"]: answer for answer in map(json.loads, output.getvalue().splitlines())}


def modern_meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """
    The 2026-07-28 request envelope (MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28, basic/versioning,
    SEP-2575).
    """
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-pipe-test", "version": "1"},
    }


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC request."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC notification."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def modern(request_id: Any, method: str, params: dict[str, Any] | None = None,
           capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """A 2026-07-28 request: ``params`` plus the ``_meta`` envelope."""
    return request(request_id, method, {**(params or {}), "_meta": modern_meta(capabilities)})


def text_of(result: dict[str, Any]) -> list[str]:
    """The text blocks of a tool result."""
    return [block["text"] for block in result["content"] if block.get("type") == "text"]


class StdioProcess:
    """``manage.py mcp_stdio`` on raw pipes; one reader thread per output pipe."""

    def __init__(self, env: Mapping[str, str], args: tuple[str, ...] = (), *,
                 command: list[str] | None = None, cwd: Path = ROOT) -> None:
        self.command = command or [sys.executable, "manage.py", "mcp_stdio", *args]
        self.proc = subprocess.Popen(self.command, cwd=cwd, env=dict(env), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw_stdout: list[bytes] = []  # every stdout line, as read (newline included)
        self.stderr_chunks: list[bytes] = []
        self.messages: list[Any] = []  # every parsed stdout message, in order
        self.unclaimed: list[Any] = []  # parsed but not yet returned by next_message()/wait_for()
        self.stdout_closed = False
        self._threads = [threading.Thread(target=self._pump_stdout, daemon=True),
                         threading.Thread(target=self._pump_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()

    # pipes ------------------------------------------------------------------------------------

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def describe(self) -> str:
        return f"stderr of {self.command}:\n{self.stderr[-3000:]}"

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    # reading ----------------------------------------------------------------------------------

    def _read(self, timeout: float) -> Any:
        """The next stdout message (parsed), or raise ``TimeoutError``; ``EOFError`` once stdout ends."""
        if self.stdout_closed:
            raise EOFError("stdout closed")
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"nothing on stdout within {timeout:g} s; {self.describe()}") from None
        if line is None:
            self.stdout_closed = True
            raise EOFError(f"stdout closed (exit {self.proc.poll()}); {self.describe()}")
        try:
            message = json.loads(line)
        except ValueError:
            raise AssertionError(f"stdout line is not JSON (MCP spec 2026-07-28, basic/transports/stdio): "
                                 f"{line[:300]!r}") from None
        self.messages.append(message)
        return message

    def next_message(self, timeout: float = READ_TIMEOUT) -> Any:
        if self.unclaimed:
            return self.unclaimed.pop(0)
        return self._read(timeout)

    def wait_for(self, predicate: Callable[[Any], bool], timeout: float = READ_TIMEOUT) -> Any:
        """The first message (earlier unclaimed ones included) matching ``predicate``."""
        for index, message in enumerate(self.unclaimed):
            if predicate(message):
                return self.unclaimed.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no matching message within {timeout:g} s; got {self.unclaimed}; "
                                   f"{self.describe()}")
            message = self._read(remaining)
            if predicate(message):
                return message
            self.unclaimed.append(message)

    def response(self, request_id: Any, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        return self.wait_for(lambda m: isinstance(m, dict) and "method" not in m and m.get("id") == request_id,
                             timeout)

    def call(self, message: dict[str, Any], timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        self.send(message)
        return self.response(message["id"], timeout)

    def quiet_for(self, seconds: float) -> list[Any]:
        """Everything that arrives within ``seconds`` (stops early at end of stdout)."""
        deadline = time.monotonic() + seconds
        got = []
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                got.append(self._read(remaining))
            except (TimeoutError, EOFError):
                break
        self.unclaimed.extend(got)
        return got

    def drain(self, timeout: float = READ_TIMEOUT) -> list[Any]:
        """Every message until stdout closes (the process ended)."""
        got = list(self.unclaimed)
        self.unclaimed.clear()
        deadline = time.monotonic() + timeout
        while True:
            try:
                got.append(self._read(max(deadline - time.monotonic(), 0.01)))
            except EOFError:
                return got

    def initialize(self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None,
                   request_id: Any = "init") -> dict[str, Any]:
        response = self.call(request(request_id, "initialize", {
            "protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "raw-pipe-test", "version": "1"}}))
        assert response["result"]["protocolVersion"] == version, response
        self.send(notification("notifications/initialized"))
        return response["result"]

    # lifecycle --------------------------------------------------------------------------------

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout=5)


# --- subprocess fixtures' building blocks --------------------------------------------------------


def make_stdio_env(tmp_path_factory: Any) -> Mapping[str, str]:
    """
    Environment for ``mcp_stdio`` children: test settings, a fresh migrated SQLite file with an
    active user ``alice`` and an inactive user ``carol``, the in-memory channel layer.
    """
    path = tmp_path_factory.mktemp("stdio-sqlite") / "stdio.sqlite3"
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "MCP_TEST_DATABASE": "sqlite",
        "MCP_TEST_SQLITE": str(path),
        "MCP_TEST_CHANNEL_LAYER": "memory",
        "DJANGO_MCP_USER": None,
        "MCP_TEST_LOG_LEVEL": None,
    }
    migrate(env)
    script = ("import django; django.setup(); from django.contrib.auth.models import User; "
              "User.objects.create_user('alice'); User.objects.create_user('carol', is_active=False)")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=server_env(env), capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return {key: value for key, value in env.items() if value is not None}


def child_env(env: Mapping[str, str], **overrides: str | None) -> dict[str, str]:
    """``server_env`` without a ``DJANGO_MCP_USER`` inherited from the developer's shell."""
    return server_env({"DJANGO_MCP_USER": None, "MCP_TEST_LOG_LEVEL": None, **env, **overrides})


def spawner(stdio_env: Mapping[str, str]) -> Iterator[Callable[..., StdioProcess]]:
    """The body of a ``spawn`` fixture: ``spawn(*args, **env_overrides)`` starts a child; all are killed after."""
    started: list[StdioProcess] = []

    def start(*args: str, **overrides: str | None) -> StdioProcess:
        process = StdioProcess(child_env(stdio_env, **overrides), args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def is_error(message: Any, code: int, request_id: Any = None) -> bool:
    """Whether ``message`` is the JSON-RPC error ``code`` for ``request_id``."""
    return (isinstance(message, dict) and message.get("id") == request_id and "error" in message
            and message["error"]["code"] == code)
