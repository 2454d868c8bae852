"""
The stdio transport: ``python manage.py mcp_stdio`` as a real subprocess (issue 3, MCP spec 2026-07-28, basic/transports/stdio; MCP spec 2026-07-28, basic/versioning#backward-compatibility-with-initialization-based-versions).

- The official ``mcp`` SDK stdio client (``mcp.Client`` + ``StdioServerParameters``) in the modes
  ``legacy`` (``initialize`` at 2025-11-25), ``2026-07-28`` (stateless ``_meta`` envelope) and
  ``auto`` (probes ``server/discover``, settles on 2026-07-28): tools, structured output, progress,
  elicitation and sampling through callbacks, resources, prompts.
- Robustness on raw pipes (``subprocess.Popen``; a reader thread per pipe, every read bounded):
  malformed and oversized lines, end of input, stdout hygiene, batches, the pre-``initialize`` rule,
  both eras on one pipe, cancellation, ``subscriptions/listen``.
- ``--user`` / ``DJANGO_MCP_USER`` and ``--print-config``.

Every server runs on a module-wide, migrated SQLite file (``tests.live.migrate``) with the test
settings, so ``tests/testapp`` and ``tests/conformance_app`` provide the fixtures. Subprocess tests
are marked ``live`` (``-m "not live"`` keeps only the in-process ones).
"""

from __future__ import annotations

import asyncio
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

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext

from django_mcp import Context
from django_mcp.sites import McpSite
from tests.transports.stdio_driver import serve_lines
from tests.live import ROOT, migrate, server_env


TIMEOUT = 30  # seconds, around every SDK session
READ_TIMEOUT = 10  # seconds, for one message on a raw pipe
MODERN = "2026-07-28"
SERVER_NAME = "django-mcp-tests"
MODES = ["legacy", MODERN, "auto"]
EXPECTED_VERSION = {"legacy": "2025-11-25", MODERN: MODERN, "auto": MODERN}

live = pytest.mark.live


# --- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_env(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
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


def modern_meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """The 2026-07-28 request envelope (MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28, basic/versioning, SEP-2575)."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-pipe-test", "version": "1"},
    }


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def modern(request_id: Any, method: str, params: dict[str, Any] | None = None,
           capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return request(request_id, method, {**(params or {}), "_meta": modern_meta(capabilities)})


def text_of(result: dict[str, Any]) -> list[str]:
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
            raise AssertionError(f"stdout line is not JSON (MCP spec 2026-07-28, basic/transports/stdio): {line[:300]!r}") from None
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


@pytest.fixture
def spawn(stdio_env: Mapping[str, str]) -> Iterator[Callable[..., StdioProcess]]:
    """Start ``mcp_stdio`` children (``spawn(*args, **env_overrides)``); all are killed at the end."""
    started: list[StdioProcess] = []

    def start(*args: str, **overrides: str | None) -> StdioProcess:
        process = StdioProcess(child_env(stdio_env, **overrides), args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def is_error(message: Any, code: int, request_id: Any = None) -> bool:
    return (isinstance(message, dict) and message.get("id") == request_id and "error" in message
            and message["error"]["code"] == code)


# --- the official SDK stdio client -------------------------------------------------------------


def sdk_server(stdio_env: Mapping[str, str]) -> StdioServerParameters:
    """How an MCP host starts the server (the SDK adds PATH, HOME… to ``env``)."""
    env = {key: value for key, value in child_env(stdio_env).items()
           if key.startswith(("DJANGO_", "MCP_TEST_", "PYTHON"))}
    return StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_stdio"], cwd=str(ROOT), env=env)


def sdk_texts(result: types.CallToolResult | types.GetPromptResult) -> list[str]:
    if isinstance(result, types.GetPromptResult):
        return [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


@live
@pytest.mark.parametrize("mode", MODES)
async def test_sdk_stdio_client(stdio_env: Mapping[str, str], mode: str) -> None:
    """
    Issue 3 / MCP spec 2026-07-28, basic/transports/stdio; MCP spec 2026-07-28, basic/versioning#backward-compatibility-with-initialization-based-versions: the SDK's stdio client drives ``mcp_stdio`` in every mode.
    ``legacy`` negotiates 2025-11-25 through ``initialize``; ``auto`` discovers 2026-07-28 with
    ``server/discover``; a pinned 2026-07-28 client sends the ``_meta`` envelope on each request.
    Tools (server/tools, structured output), progress (basic/patterns/progress), resources (server/resources), prompts (server/prompts), and the
    server→client features (client/elicitation, basic/patterns/mrtr): legacy ``elicitation/create`` / ``sampling/createMessage``
    are JSON-RPC requests written to stdout (ids ``srv-…``) and answered on stdin; at 2026-07-28 the
    server MUST NOT write requests and returns an ``InputRequiredResult`` whose keys (``name``,
    ``llm_response``) the SDK fulfils through the same callbacks before retrying.
    (One session per mode: each server process costs about a second and a half to start.)
    """
    progress: list[tuple[float, float | None, str | None]] = []
    elicited: list[tuple[Any, types.ElicitRequestParams]] = []
    sampled: list[tuple[Any, types.CreateMessageRequestParams]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append((context.request_id, params))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context: ClientRequestContext,
                        params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        sampled.append((context.request_id, params))
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="Paris"),
                                         model="test-model", stop_reason="endTurn")

    async with asyncio.timeout(TIMEOUT):
        async with Client(sdk_server(stdio_env), mode=mode, elicitation_callback=on_elicit,
                          sampling_callback=on_sample) as client:
            # Discovery / handshake.
            assert client.protocol_version == EXPECTED_VERSION[mode]
            if mode != MODERN:  # a pinned client never asks: it knows no server info
                assert client.server_info is not None and client.server_info.name == SERVER_NAME
                assert client.server_capabilities.tools is not None

            # Tools.
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"echo", "add_numbers", "slow_steps", "ask_name", "wait_forever"} <= set(tools)
            assert tools["add_numbers"].output_schema is not None
            echo = await client.call_tool("echo", {"text": "hi", "times": 3})
            assert echo.is_error is False and sdk_texts(echo) == ["hi hi hi"]
            added = await client.call_tool("add_numbers", {"numbers": [2, 3, 5]})
            assert added.is_error is False
            assert added.structured_content == {"total": 10, "count": 3}
            assert [json.loads(text) for text in sdk_texts(added)] == [{"total": 10, "count": 3}]

            # Progress.
            slow = await client.call_tool("slow_steps", {"steps": 3, "delay": 0.01}, progress_callback=on_progress)
            assert sdk_texts(slow) == ["done 3 steps"]
            assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            # Elicitation and sampling through the callbacks.
            named = await client.call_tool("ask_name", {})
            assert named.is_error is False and sdk_texts(named) == ["Hello, Ada!"]
            sampling = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
            assert sdk_texts(sampling) == ["LLM response: Paris"]

            # Resources.
            greeting = await client.read_resource("memo://greeting")
            [content] = greeting.contents
            assert isinstance(content, types.TextResourceContents)
            assert (content.uri, content.mime_type, content.text) == (
                "memo://greeting", "text/plain", "Hello from the test app.")
            item = await client.read_resource("memo://items/7")
            [content] = item.contents
            assert isinstance(content, types.TextResourceContents)
            assert json.loads(content.text) == {"id": "7", "name": "Item 7"}

            # Prompts.
            prompt = await client.get_prompt("summarize", {"topic": "cats", "style": "detailed"})
            assert prompt.description == "Summarize a topic."
            assert sdk_texts(prompt) == ["Write a detailed summary of cats."]

    [(elicit_id, elicit_params)] = elicited
    assert elicit_params.message == "What is your name?"
    assert elicit_params.requested_schema["required"] == ["name"]
    [(sample_id, sample_params)] = sampled
    assert sample_params.max_tokens == 100
    assert [message.content.text for message in sample_params.messages] == ["Capital of France?"]
    if mode == "legacy":
        assert str(elicit_id).startswith("srv-") and str(sample_id).startswith("srv-")
    else:
        assert (elicit_id, sample_id) == ("name", "llm_response")


# --- robustness on raw pipes -------------------------------------------------------------------


@live
def test_malformed_line_gets_parse_error_and_serving_continues(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3 / MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28, basic#error-codes: a line that is not JSON gets a ``-32700`` error with ``id: null``
    (the id could not be read) and the process keeps serving — before and after ``initialize``.
    Invalid UTF-8 is a parse error too; valid JSON that is not a JSON-RPC message is ``-32600``.
    """
    process = spawn()
    process.send_raw(b"{this is not json\n")
    assert is_error(process.next_message(), -32700), process.messages
    process.initialize()
    for bad in (b'{"jsonrpc": "2.0", "id": 3, "method": "ping"\n', b"\xff\xfe\xfd\n", b"[1, 2\n"):
        process.send_raw(bad)
        assert is_error(process.next_message(), -32700), (bad, process.messages)
    process.send_raw(b"42\n")
    assert is_error(process.next_message(), -32600), process.messages
    assert process.call(request(4, "ping")) == {"jsonrpc": "2.0", "id": 4, "result": {}}
    assert process.proc.poll() is None


@live
def test_ten_megabyte_line_is_refused_and_next_line_is_served(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3: "a 10 MB line is refused cleanly" — above ``MAX_REQUEST_BODY_SIZE`` (4 MiB) the line is
    dropped up to its newline and answered with ``-32600`` (``id: null``: it is never parsed), and
    the very next line is served. The oversized request itself gets no other answer.
    """
    process = spawn()
    process.initialize()
    huge = request(5, "tools/call", {"name": "echo", "arguments": {"text": "x" * (10 * 1024 * 1024)}})
    payload = json.dumps(huge).encode() + b"\n"
    assert len(payload) > 10_000_000
    process.send_raw(payload + json.dumps(request(6, "ping")).encode() + b"\n")
    refusal = process.next_message()
    assert is_error(refusal, -32600), refusal
    assert "4194304" in refusal["error"]["message"]
    assert process.next_message() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    echo = process.call(request(7, "tools/call", {"name": "echo", "arguments": {"text": "still here"}}))
    assert text_of(echo["result"]) == ["still here"]
    assert not any(isinstance(m, dict) and m.get("id") == 5 for m in process.messages)


@live
def test_oversized_last_line_is_refused_whole(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3 / MCP spec 2026-07-28, basic/transports/stdio: an oversized last line (no newline before stdin closes) is refused as a
    whole: exactly one ``-32600`` answer (``id: null``), then exit 0. Nothing inside it — here a
    complete ``initialize`` request after 10 MB of padding — may be answered.
    """
    process = spawn()
    smuggled = json.dumps(request("smuggled", "initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}))
    process.send_raw(b" " * (10 * 1024 * 1024) + smuggled.encode())
    process.close_stdin()
    messages = process.drain()
    assert process.wait(10) == 0
    assert len(messages) == 1 and is_error(messages[0], -32600), messages


@live
def test_end_of_input_exits_with_code_zero(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec 2026-07-28, basic/transports/stdio: the client closes stdin to shut the server down; it SHOULD exit promptly. With
    work in flight — a ``wait_forever`` call and an unanswered legacy elicitation request
    (``srv-…``) — the process still ends with exit code 0 within a few seconds, and whatever it
    writes on the way out is well-formed JSON-RPC. A process whose stdin closes before any message
    writes nothing and exits 0 too. (Both processes start side by side.)
    """
    idle, busy = spawn(), spawn()
    idle.close_stdin()

    busy.initialize(capabilities={"elicitation": {}})
    busy.send(request(10, "tools/call", {"name": "wait_forever", "arguments": {}}))
    busy.send(request(11, "tools/call", {"name": "ask_name", "arguments": {}}))
    asked = busy.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "elicitation/create")
    assert str(asked["id"]).startswith("srv-")
    assert busy.call(request(12, "ping"))["result"] == {}
    started = time.monotonic()
    busy.close_stdin()
    leftovers = busy.drain()
    assert busy.wait(5) == 0, busy.describe()
    assert time.monotonic() - started < 5
    assert all(isinstance(m, dict) and m.get("jsonrpc") == "2.0" for m in leftovers), leftovers

    assert idle.wait(10) == 0, idle.describe()
    assert idle.drain() == [] and idle.raw_stdout == []


@live
def test_stdout_carries_only_jsonrpc_and_logs_go_to_stderr(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec 2026-07-28, basic/transports/stdio: the server MUST NOT write anything but MCP messages to stdout and MAY log to
    stderr. With the ``django_mcp`` logger at DEBUG, a failing tool logs (to stderr) while stdout
    — through errors, log notifications, progress and a refused line — holds only newline-terminated
    JSON-RPC 2.0 messages.
    """
    process = spawn(MCP_TEST_LOG_LEVEL="DEBUG")
    process.initialize()
    assert process.call(request(1, "logging/setLevel", {"level": "debug"}))["result"] == {}
    failed = process.call(request(2, "tools/call", {"name": "test_error_handling", "arguments": {}}))
    assert failed["result"]["isError"] is True
    process.call(request(3, "tools/call", {"name": "test_logging_tool", "arguments": {}}))
    process.call(request(4, "tools/call", {"name": "slow_steps", "arguments": {"steps": 2, "delay": 0.01},
                                           "_meta": {"progressToken": "p"}}))
    process.send_raw(b"not json\n" + b"x" * (5 * 1024 * 1024) + b"\n")
    process.call(request(5, "ping"))
    process.close_stdin()
    process.drain()
    assert process.wait(10) == 0
    kinds = {m.get("method") for m in process.messages if isinstance(m, dict)}
    assert {"notifications/message", "notifications/progress"} <= kinds, kinds

    assert process.raw_stdout, "no output at all"
    for line in process.raw_stdout:
        assert line.endswith(b"\n") and line.count(b"\n") == 1, line[:200]
        message = json.loads(line.decode("utf-8"))
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line[:200]
    assert "Tool test_error_handling failed" in process.stderr, process.stderr


@live
def test_batch_on_a_2025_03_26_session(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec basic#messages, basic/transports/stdio: at 2025-03-26 a line may be a JSON-RPC batch. Every request in it gets exactly
    one response, notifications none; a bad member gets its own error; ``initialize`` MUST NOT be
    batched; an empty batch is ``-32600``. (Responses may come as lines or as one array line.)
    """
    process = spawn()
    process.initialize("2025-03-26")
    process.send([
        request(1, "ping"),
        request(2, "tools/call", {"name": "echo", "arguments": {"text": "batched"}}),
        notification("notifications/initialized"),
        request(3, "tools/list"),
        {"jsonrpc": "2.0", "id": 4},
        request(5, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                  "clientInfo": {"name": "x", "version": "1"}}),
    ])
    responses: list[dict[str, Any]] = []
    while len(responses) < 5:
        message = process.next_message()
        responses.extend(message if isinstance(message, list) else [message])
    responses.extend(m for extra in process.quiet_for(0.5) for m in (extra if isinstance(extra, list) else [extra]))
    by_id = {response["id"]: response for response in responses}
    assert sorted(by_id) == [1, 2, 3, 4, 5] and len(responses) == 5, responses
    assert by_id[1]["result"] == {}
    assert text_of(by_id[2]["result"]) == ["batched"]
    assert "echo" in {tool["name"] for tool in by_id[3]["result"]["tools"]}
    assert by_id[4]["error"]["code"] == -32600
    assert by_id[5]["error"]["code"] == -32600

    process.send([])
    assert is_error(process.next_message(), -32600)
    assert process.call(request(6, "ping"))["result"] == {}


@live
def test_batch_is_refused_on_a_2025_11_25_session(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec basic#messages: batching was removed after 2025-03-26 — on a 2025-11-25 session an array line is one
    ``-32600`` error (``id: null``) and none of its members runs. The session keeps serving.
    """
    process = spawn()
    process.initialize("2025-11-25")
    process.send([request(1, "ping"), request(2, "tools/list")])
    assert is_error(process.next_message(), -32600), process.messages
    assert process.call(request(3, "ping"))["result"] == {}
    assert not [m for m in process.messages if isinstance(m, dict) and m.get("id") in (1, 2)]


@live
def test_request_before_initialize_without_meta_is_invalid(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec 2025-11-25 basic/lifecycle, basic/versioning#backward-compatibility: a legacy request needs ``initialize`` first; without it and without the
    2026-07-28 ``_meta`` envelope it is ``-32600`` (with its id). Notifications get no answer.
    ``initialize`` then still works.
    """
    process = spawn()
    process.send(notification("notifications/initialized"))
    for request_id, method in ((1, "tools/list"), ("two", "ping")):
        response = process.call(request(request_id, method))
        assert response["error"]["code"] == -32600, response
    process.send([request(3, "ping")])
    assert is_error(process.next_message(), -32600)
    process.initialize()
    assert process.call(request(4, "ping"))["result"] == {}
    assert len([m for m in process.messages if "error" in m]) == 3, process.messages


@live
def test_modern_requests_in_a_legacy_process_are_stateless(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec 2026-07-28, basic/transports/stdio, basic/versioning#backward-compatibility: a dual-era server MAY interleave both eras on one pipe. In a process that
    negotiated 2025-11-25 (with the elicitation capability), a request with the 2026-07-28
    ``_meta`` is served on its own: ``server/discover`` answers with ``resultType: complete``; a tool
    that elicits returns an ``InputRequiredResult`` (MRTR, MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322) instead of writing a
    request, and the retry with ``inputResponses`` + ``requestState`` completes. The legacy session
    still gets a real ``elicitation/create`` request (``srv-…``) for the same tool.
    """
    process = spawn()
    process.initialize(capabilities={"elicitation": {}})

    discover = process.call(modern("d1", "server/discover"))["result"]
    assert discover["resultType"] == "complete"
    assert MODERN in discover["supportedVersions"]
    assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == SERVER_NAME

    first = process.call(modern("m1", "tools/call", {"name": "ask_name", "arguments": {}}, {"elicitation": {}}))
    result = first["result"]
    assert result["resultType"] == "input_required", result
    assert result["inputRequests"]["name"]["method"] == "elicitation/create"
    assert not [m for m in process.messages if isinstance(m, dict) and m.get("method") == "elicitation/create"]
    retry = {"name": "ask_name", "arguments": {}, "inputResponses": {"name": {"action": "accept",
                                                                              "content": {"name": "Grace"}}}}
    if "requestState" in result:
        retry["requestState"] = result["requestState"]
    done = process.call(modern("m2", "tools/call", retry, {"elicitation": {}}))["result"]
    assert done["resultType"] == "complete" and text_of(done) == ["Hello, Grace!"]

    process.send(request(20, "tools/call", {"name": "ask_name", "arguments": {}}))
    asked = process.wait_for(lambda m: isinstance(m, dict) and m.get("method") == "elicitation/create")
    assert str(asked["id"]).startswith("srv-")
    assert asked["params"]["message"] == "What is your name?"
    process.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ada"}}})
    legacy = process.response(20)["result"]
    assert text_of(legacy) == ["Hello, Ada!"] and "resultType" not in legacy

    # A change made by a modern request reaches the legacy session as a plain (untagged) notification.
    process.call(modern("m3", "tools/call", {"name": "test_trigger_tool_change", "arguments": {}}))
    event = process.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
    assert "io.modelcontextprotocol/subscriptionId" not in (event.get("params") or {}).get("_meta", {})


@live
def test_modern_only_process(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec 2026-07-28, basic/transports/stdio, basic/versioning: a process that never sends ``initialize`` is served request by request from
    the ``_meta`` envelope, and no request is ever written to stdout (a tool needing elicitation
    without the capability fails with ``-32021``). Legacy ``ping`` without a session stays ``-32600``;
    envelope errors are answered per request.
    """
    process = spawn()
    assert process.call(modern(1, "server/discover"))["result"]["resultType"] == "complete"
    echo = process.call(modern(2, "tools/call", {"name": "echo", "arguments": {"text": "hey"}}))["result"]
    assert echo["resultType"] == "complete" and text_of(echo) == ["hey"]
    missing = process.call(modern(3, "tools/call", {"name": "ask_name", "arguments": {}}))
    assert missing["error"]["code"] == -32021, missing
    assert process.call(request(4, "ping"))["error"]["code"] == -32600

    # The envelope is checked per request (MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28, basic/versioning, SEP-2575): an unknown version is -32022 naming every
    # version served; a missing clientCapabilities is -32602; a modern `initialize` is no handshake (-32601).
    unsupported = process.call(request(5, "server/discover", {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}))
    assert unsupported["error"]["code"] == -32022, unsupported
    assert {MODERN, "2025-11-25"} <= set(unsupported["error"]["data"]["supported"])
    assert unsupported["error"]["data"]["requested"] == "1900-01-01"
    incomplete = process.call(request(6, "server/discover", {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN}}))
    assert incomplete["error"]["code"] == -32602, incomplete
    handshake = process.call(modern(7, "initialize", {"protocolVersion": MODERN, "capabilities": {},
                                                       "clientInfo": {"name": "x", "version": "1"}}))
    assert handshake["error"]["code"] == -32601, handshake
    assert not [m for m in process.messages if isinstance(m, dict) and "method" in m and "id" in m]


@live
def test_cancelled_request_gets_no_response(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec basic/patterns/cancellation: on ``notifications/cancelled`` the server SHOULD stop and not respond; on stdio this
    is how a 2026-07-28 client cancels too (basic/transports/stdio). A cancelled ``wait_forever`` — a legacy one and a
    modern one — never gets a response, and the process keeps serving. Cancelling an unknown id is
    ignored.
    """
    process = spawn()
    process.initialize()
    process.send(request(7, "tools/call", {"name": "wait_forever", "arguments": {}}))
    process.send(modern("m7", "tools/call", {"name": "wait_forever", "arguments": {}}))
    assert process.call(request(8, "ping"))["result"] == {}  # both calls are in flight by now
    process.send(notification("notifications/cancelled", {"requestId": 7, "reason": "user gave up"}))
    process.send(notification("notifications/cancelled", {"requestId": "m7"}))
    process.send(notification("notifications/cancelled", {"requestId": "never-sent"}))
    assert process.call(request(9, "ping"))["result"] == {}
    echo = process.call(modern(10, "tools/call", {"name": "echo", "arguments": {"text": "alive"}}))
    assert text_of(echo["result"]) == ["alive"]
    process.quiet_for(0.5)
    assert not [m for m in process.messages if isinstance(m, dict) and m.get("id") in (7, "m7")], process.messages
    assert process.proc.poll() is None


@live
def test_subscriptions_listen(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec basic/patterns/subscriptions: ``subscriptions/listen`` on stdio — the first message is
    ``notifications/subscriptions/acknowledged`` with the honoured filter, then change notifications
    tagged with ``io.modelcontextprotocol/subscriptionId`` (the listen request's id); filters not
    asked for are not delivered. After ``notifications/cancelled`` for the listen id nothing more
    is sent for it. A process that never initialized gets no untagged (session) notifications.
    """
    process = spawn()
    process.send(modern("sub-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
    ack = process.next_message()
    assert ack["method"] == "notifications/subscriptions/acknowledged", ack
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}

    changed = process.call(modern(1, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}}))
    assert changed["result"]["isError"] is False
    event = process.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
    assert event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
    process.call(modern(2, "tools/call", {"name": "test_trigger_prompt_change", "arguments": {}}))

    process.send(notification("notifications/cancelled", {"requestId": "sub-1"}))
    assert process.call(modern(3, "server/discover"))["result"]["resultType"] == "complete"
    process.call(modern(4, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}}))
    process.quiet_for(0.5)
    notes = [m for m in process.messages if "method" in m]
    assert [m["method"] for m in notes] == ["notifications/subscriptions/acknowledged",
                                            "notifications/tools/list_changed"], notes


@live
def test_second_initialize_does_not_duplicate_notifications(spawn: Callable[..., StdioProcess]) -> None:
    """
    MCP spec 2026-07-28, basic/transports/stdio, 2025-11-25 basic/lifecycle: the stdio process is the legacy session and ``initialize`` is its first
    interaction. Whether a repeated ``initialize`` is refused or replaces the session, the client
    must keep getting each change notification once — never twice.
    """
    process = spawn()
    process.initialize()
    process.call(request("again", "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                 "clientInfo": {"name": "x", "version": "1"}}))
    process.call(request(1, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}}))
    process.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
    process.quiet_for(0.5)
    changes = [m for m in process.messages if m.get("method") == "notifications/tools/list_changed"]
    assert len(changes) == 1, changes


# --- acting as a user ----------------------------------------------------------------------------


@live
def test_unknown_or_inactive_user_fails_to_start(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3: stdio takes credentials from the environment (MCP spec 2026-07-28, basic/authorization), so ``--user`` or
    ``DJANGO_MCP_USER`` name the user. An unknown or inactive user is a startup error: non-zero
    exit, a message on stderr, nothing on stdout (MCP spec 2026-07-28, basic/transports/stdio).
    """
    cases = {
        "--user bob": (spawn("--user", "bob"), "bob"),
        "DJANGO_MCP_USER=bob": (spawn(DJANGO_MCP_USER="bob"), "bob"),
        "--user carol (inactive)": (spawn("--user", "carol"), "carol"),
        "--user beats the environment": (spawn("--user", "bob", DJANGO_MCP_USER="alice"), "bob"),
    }
    for label, (process, name) in cases.items():
        process.close_stdin()
        code = process.wait(30)
        process.drain()
        assert code != 0, (label, process.describe())
        assert name in process.stderr, (label, process.stderr)
        assert process.raw_stdout == [], (label, process.raw_stdout)
    assert "not active" in cases["--user carol (inactive)"][0].stderr


@live
def test_known_user_serves(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3: with an existing, active user — by ``--user alice`` or ``DJANGO_MCP_USER=alice`` —
    the server starts and serves: ``initialize``, ``ping`` and a tool call answer, and the process
    exits 0 when stdin closes.
    """
    for process in (spawn("--user", "alice"), spawn(DJANGO_MCP_USER="alice")):
        process.initialize()
        assert process.call(request(1, "ping"))["result"] == {}
        echo = process.call(request(2, "tools/call", {"name": "echo", "arguments": {"text": "as alice"}}))
        assert text_of(echo["result"]) == ["as alice"]
        process.close_stdin()
        process.drain()
        assert process.wait(10) == 0, process.describe()


@pytest.mark.django_db
async def test_calls_run_as_the_given_user() -> None:
    """
    In-process (``StdioServer`` on byte buffers; no subprocess): every call, legacy or 2026-07-28,
    sees the user the transport was started with — ``ctx.user`` and primitive permissions — and an
    anonymous server does not offer a tool that needs an authenticated user (issue 3: "without it,
    only what anonymous users may see is served").
    """
    from django.contrib.auth.models import AnonymousUser, User

    site = McpSite("stdio-identity")

    @site.tool()
    async def whoami(ctx: Context) -> str:
        """The username the call runs as."""
        return ctx.user.username or "anonymous"

    @site.tool(permission=lambda ctx: ctx.user.is_authenticated)
    async def members_only() -> str:
        """Only for authenticated users."""
        return "welcome"

    lines = [
        request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "x", "version": "1"}}),
        request(2, "tools/call", {"name": "whoami", "arguments": {}}),
        request(3, "tools/list"),
        modern(4, "tools/call", {"name": "whoami", "arguments": {}}),
        modern(5, "tools/call", {"name": "members_only", "arguments": {}}),
    ]

    async def run(user: Any) -> dict[Any, dict[str, Any]]:
        return await serve_lines(site, user, lines)

    alice = await run(User(username="alice"))
    assert text_of(alice[2]["result"]) == ["alice"]
    assert {tool["name"] for tool in alice[3]["result"]["tools"]} == {"whoami", "members_only"}
    assert text_of(alice[4]["result"]) == ["alice"]
    assert text_of(alice[5]["result"]) == ["welcome"]

    anonymous = await run(AnonymousUser())
    assert text_of(anonymous[2]["result"]) == ["anonymous"]
    assert {tool["name"] for tool in anonymous[3]["result"]["tools"]} == {"whoami"}
    assert anonymous[5]["error"]["code"] == -32602


# --- --print-config -----------------------------------------------------------------------------


def print_config(stdio_env: Mapping[str, str], *args: str, **overrides: str | None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "manage.py", "mcp_stdio", "--print-config", *args], cwd=ROOT,
                            env=child_env(stdio_env, **overrides), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def printed_configs(stdio_env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """``--print-config`` output (parsed) for three invocations, run side by side."""
    processes = {
        "plain": print_config(stdio_env),
        "user and name": print_config(stdio_env, "--user", "alice", "--name", "library"),
        "user from env": print_config(stdio_env, DJANGO_MCP_USER="alice"),
    }
    configs = {}
    for label, process in processes.items():
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, (label, err.decode())
        configs[label] = json.loads(out)  # the JSON and nothing else on stdout
    return configs


@live
def test_print_config(printed_configs: dict[str, dict[str, Any]]) -> None:
    """
    Issue 3: ``--print-config`` prints a ready-to-paste client configuration —
    ``mcpServers.<name>.command`` is the Python interpreter, ``args`` run ``mcp_stdio`` (with
    ``--user`` when one is given, by option or ``DJANGO_MCP_USER``), ``env`` names the settings
    module — as JSON alone on stdout, and exits 0 without serving.
    """
    [(name, server)] = printed_configs["plain"]["mcpServers"].items()
    assert name == "django"
    assert server["command"] == sys.executable
    assert "mcp_stdio" in server["args"] and "--user" not in server["args"]
    assert Path(server["args"][0]) == ROOT / "manage.py"
    assert server["env"]["DJANGO_SETTINGS_MODULE"] == "tests.settings"

    library = printed_configs["user and name"]["mcpServers"]["library"]
    assert library["command"] == sys.executable
    assert "mcp_stdio" in library["args"] and library["args"][-2:] == ["--user", "alice"]
    assert library["env"]["DJANGO_SETTINGS_MODULE"] == "tests.settings"
    assert printed_configs["user from env"]["mcpServers"]["django"]["args"][-2:] == ["--user", "alice"]


@live
async def test_printed_config_starts_a_working_server(stdio_env: Mapping[str, str],
                                                      printed_configs: dict[str, dict[str, Any]],
                                                      tmp_path: Path) -> None:
    """
    Issue 3 ("a newcomer … connects a stdio client"): the printed ``command``/``args``/``env``,
    used as is by the SDK stdio client from an unrelated working directory (as desktop hosts do),
    start a server that serves — here with ``--user alice``. Only the test database is added to the
    printed env.
    """
    server = printed_configs["user and name"]["mcpServers"]["library"]
    env = {**server["env"], "MCP_TEST_SQLITE": stdio_env["MCP_TEST_SQLITE"]}
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env, cwd=str(tmp_path))
    async with asyncio.timeout(TIMEOUT):
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("echo", {"text": "configured"})
    assert sdk_texts(result) == ["configured"]
