"""
The stdio transport on raw pipes: ``python manage.py mcp_stdio`` as a real subprocess
(``subprocess.Popen``; a reader thread per pipe, every read bounded; MCP spec 2026-07-28,
basic/transports/stdio): malformed and oversized lines, end of input, stdout hygiene, batches, the
pre-``initialize`` rule, both eras on one pipe, cancellation, ``subscriptions/listen``.

Every server runs on a module-wide, migrated SQLite file (``tests.live.migrate``) with the test
settings, so ``tests/testapp`` and ``tests/conformance_app`` provide the fixtures. All are marked
``live``. The SDK client, ``--user`` and ``--print-config`` are in test_stdio.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from tests.transports.stdio_driver import (MODERN, StdioProcess, is_error, make_stdio_env, modern, notification,
                                           request, spawner, text_of)


SERVER_NAME = "django-mcp-tests"

live = pytest.mark.live


@pytest.fixture(scope="module")
def stdio_env(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
    """A migrated SQLite file with users ``alice`` (active) and ``carol`` (inactive); see ``make_stdio_env``."""
    return make_stdio_env(tmp_path_factory)


@pytest.fixture
def spawn(stdio_env: Mapping[str, str]) -> Iterator[Callable[..., StdioProcess]]:
    """Start ``mcp_stdio`` children (``spawn(*args, **env_overrides)``); all are killed at the end."""
    yield from spawner(stdio_env)


# --- robustness on raw pipes -------------------------------------------------------------------


@live
def test_malformed_line_gets_parse_error_and_serving_continues(spawn: Callable[..., StdioProcess]) -> None:
    """
    Issue 3 / MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28, basic#error-codes: a line that is not JSON gets
    a ``-32700`` error with ``id: null`` (the id could not be read) and the process keeps serving — before and after
    ``initialize``. Invalid UTF-8 is a parse error too; valid JSON that is not a JSON-RPC message is ``-32600``.
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
    Issue 3 / MCP spec 2026-07-28, basic/transports/stdio: an oversized last line (no newline before stdin closes) is
    refused as a whole: exactly one ``-32600`` answer (``id: null``), then exit 0. Nothing inside it — here a complete
    ``initialize`` request after 10 MB of padding — may be answered.
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
    MCP spec 2026-07-28, basic/transports/stdio: the client closes stdin to shut the server down; it SHOULD exit
    promptly. With work in flight — a ``wait_forever`` call and an unanswered legacy elicitation request (``srv-…``) —
    the process still ends with exit code 0 within a few seconds, and whatever it writes on the way out is well-formed
    JSON-RPC. A process whose stdin closes before any message writes nothing and exits 0 too. (Both processes start side
    by side.)
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
    MCP spec 2026-07-28, basic/transports/stdio: the server MUST NOT write anything but MCP messages to stdout and MAY
    log to stderr. With the ``django_mcp`` logger at DEBUG, a failing tool logs (to stderr) while stdout — through
    errors, log notifications, progress and a refused line — holds only newline-terminated JSON-RPC 2.0 messages.
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
    MCP spec basic#messages, basic/transports/stdio: at 2025-03-26 a line may be a JSON-RPC batch. Every request in it
    gets exactly one response, notifications none; a bad member gets its own error; ``initialize`` MUST NOT be batched;
    an empty batch is ``-32600``. (Responses may come as lines or as one array line.)
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
    MCP spec 2025-11-25 basic/lifecycle, basic/versioning#backward-compatibility: a legacy request needs ``initialize``
    first; without it and without the 2026-07-28 ``_meta`` envelope it is ``-32600`` (with its id). Notifications get no
    answer. ``initialize`` then still works.
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
    MCP spec 2026-07-28, basic/transports/stdio, basic/versioning#backward-compatibility: a dual-era server MAY
    interleave both eras on one pipe. In a process that negotiated 2025-11-25 (with the elicitation capability), a
    request with the 2026-07-28 ``_meta`` is served on its own: ``server/discover`` answers with ``resultType:
    complete``; a tool that elicits returns an ``InputRequiredResult`` (MRTR, MCP spec 2026-07-28, basic/patterns/mrtr,
    SEP-2322) instead of writing a request, and the retry with ``inputResponses`` + ``requestState`` completes. The
    legacy session still gets a real ``elicitation/create`` request (``srv-…``) for the same tool.
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
    MCP spec 2026-07-28, basic/transports/stdio, basic/versioning: a process that never sends ``initialize`` is served
    request by request from the ``_meta`` envelope, and no request is ever written to stdout (a tool needing elicitation
    without the capability fails with ``-32021``). Legacy ``ping`` without a session stays ``-32600``; envelope errors
    are answered per request.
    """
    process = spawn()
    assert process.call(modern(1, "server/discover"))["result"]["resultType"] == "complete"
    echo = process.call(modern(2, "tools/call", {"name": "echo", "arguments": {"text": "hey"}}))["result"]
    assert echo["resultType"] == "complete" and text_of(echo) == ["hey"]
    missing = process.call(modern(3, "tools/call", {"name": "ask_name", "arguments": {}}))
    assert missing["error"]["code"] == -32021, missing
    assert process.call(request(4, "ping"))["error"]["code"] == -32600

    # The envelope is checked per request (MCP spec 2026-07-28, basic#messages; basic/versioning, SEP-2575): an
    # unknown version is -32022 naming every version served; a missing clientCapabilities is -32602; a modern
    # `initialize` is no handshake (-32601).
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
    MCP spec basic/patterns/cancellation: on ``notifications/cancelled`` the server SHOULD stop and not respond; on
    stdio this is how a 2026-07-28 client cancels too (basic/transports/stdio). A cancelled ``wait_forever`` — a legacy
    one and a modern one — never gets a response, and the process keeps serving. Cancelling an unknown id is ignored.
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
    MCP spec 2026-07-28, basic/transports/stdio, 2025-11-25 basic/lifecycle: the stdio process is the legacy session and
    ``initialize`` is its first interaction. Whether a repeated ``initialize`` is refused or replaces the session, the
    client must keep getting each change notification once — never twice.
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
