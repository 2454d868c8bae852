"""
The 2024-11-05 HTTP+SSE transport (MCP spec 2024-11-05, basic/transports#http-with-sse, wire example) against a live daphne server.

``GET /sse`` opens a stream whose first event is ``endpoint`` with the URL to POST to
(``/messages/?session_id=<hex>``); every POST there is answered ``202 Accepted`` at once and the
JSON-RPC answer arrives later on the stream as an ``event: message``; the stream carries keep-alive
comments (``: ping - <timestamp>``) and its end ends the session.

Three groups of tests:

- raw HTTP with the standard library (``http.client``, ``tests/transports/sse_client.py``), so
  every byte that matters is checked: on a server of its own whose keep-alive interval is 1 s
  (``MCP_TEST_KEEPALIVE=1``), which also bounds every "nothing arrives" wait;
- the official ``mcp`` SDK's SSE client (``mcp.client.sse.sse_client``) on ``live_server_mcp``;
- bad input: every refusal has the right status and body, leaves nothing on the stream, and the
  session keeps working afterwards.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.sse import sse_client

from tests.live import LiveServer
from tests.transports.sse_client import JSON, SSE, SseSession, send
from tests.transports.workers import tool_text


TIMEOUT = 20
SERVER_NAME = "django-mcp-tests"
SESSION_ID = re.compile(r"[0-9a-f]{32}")
PING = re.compile(r": ping - (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})")
FOREIGN_HOST = "evil.example"
FOREIGN_ORIGIN = "http://evil.example"


# --- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(sqlite_server_env: Mapping[str, str]) -> Iterator[LiveServer]:
    """A daphne server like ``live_server_mcp`` whose SSE streams send a keep-alive every second."""
    with LiveServer(env={**sqlite_server_env, "MCP_TEST_KEEPALIVE": "1"}, name="legacy-sse-keepalive") as live:
        yield live


@pytest.fixture
def session(server: LiveServer) -> Iterator[SseSession]:
    """An open, initialized 2024-11-05 session (client capabilities: elicitation)."""
    opened = SseSession.open(server)
    try:
        opened.initialize(server, capabilities={"elicitation": {}})
        yield opened
    finally:
        opened.close()


def assert_jsonrpc_error(body: Any, code: int | None = None, request_id: Any = None) -> None:
    """A JSON-RPC 2.0 error response (MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28, basic#error-codes)."""
    assert isinstance(body, dict), body
    assert body.get("jsonrpc") == "2.0", body
    assert body.get("id") == request_id, body
    assert "result" not in body, body
    assert isinstance(body["error"].get("code"), int) and isinstance(body["error"].get("message"), str), body
    if code is not None:
        assert body["error"]["code"] == code, body


def assert_still_served(server: LiveServer, session: SseSession, text: str = "still here") -> None:
    """The session still works, and the very next message on its stream is this call's answer."""
    message = session.message("tools/call", {"name": "echo", "arguments": {"text": text}})
    session.accepted(server, message)
    response = session.stream.next_message()
    assert response.get("id") == message["id"], f"something else arrived on the stream first: {response}"
    assert tool_text(response) == text


def wait_for_404(server: LiveServer, session: SseSession, seconds: float = 2.0) -> tuple[int, Any]:
    """POST pings to the session until it is gone (the server notices the closed stream) or time runs out."""
    deadline = time.monotonic() + seconds
    while True:
        reply = session.post(server, session.message("ping"))
        if reply.status == 404 or time.monotonic() > deadline:
            return reply.status, reply.body
        time.sleep(0.05)


# --- 1. the raw 2024-11-05 flow ----------------------------------------------------------------


def test_raw_flow_byte_by_byte(server: LiveServer) -> None:
    """
    The HTTP+SSE flow of 2024-11-05 (MCP spec 2024-11-05, basic/transports#http-with-sse, wire example), checked on the wire:
    ``GET /sse`` → 200 ``text/event-stream``, not cached, whose first event is exactly
    ``event: endpoint`` / ``data: /messages/?session_id=<32 hex>`` (python-sdk convention); each POST
    to that URL → ``202`` ``Accepted`` (python-sdk convention); each answer → an ``event: message``
    whose one ``data:`` line is the JSON-RPC response with the request's id; a notification gets
    nothing back; an idle stream carries ``: ping - <YYYY-mm-dd HH:MM:SS>`` comments; closing the
    stream ends the session, so a later POST naming it → 404.
    """
    reply = send(server, "GET", "/sse", headers={"Accept": SSE})
    assert reply.status == 200, (reply.status, reply.raw)
    assert reply.stream is not None
    stream = reply.stream
    try:
        assert reply.content_type == "text/event-stream", reply.headers
        assert "no-cache" in [part.strip() for part in reply.headers.get("cache-control", "").split(",")], reply.headers

        # The endpoint event is the first thing on the stream, with nothing but its two lines.
        endpoint = stream.next_event(time.monotonic() + 10)
        assert endpoint is not None
        assert stream.comment_lines == []
        session_id = endpoint["data"].partition("session_id=")[2]
        assert SESSION_ID.fullmatch(session_id), endpoint
        assert stream.last_lines == ["event: endpoint", f"data: /messages/?session_id={session_id}", ""]
        url = f"/messages/?session_id={session_id}"

        def post(message: dict[str, Any]) -> None:
            answer = send(server, "POST", url, json.dumps(message).encode(), {"Content-Type": JSON})
            assert answer.status == 202, (answer.status, answer.raw)
            assert answer.raw == b"Accepted"

        def next_message_event() -> dict[str, Any]:
            event = stream.next_event(time.monotonic() + 10)
            assert event is not None, "the stream ended"
            data = event["data"]
            assert stream.last_lines == ["event: message", f"data: {data}", ""], stream.last_lines
            return json.loads(data)

        post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                         "clientInfo": {"name": "raw-2024-11-05", "version": "0.0.1"}}})
        initialized = next_message_event()
        assert set(initialized) == {"jsonrpc", "id", "result"}, initialized
        assert initialized["jsonrpc"] == "2.0" and initialized["id"] == 1
        result = initialized["result"]
        assert result["protocolVersion"] == "2024-11-05"
        assert result["serverInfo"]["name"] == SERVER_NAME
        assert isinstance(result["serverInfo"]["version"], str) and result["serverInfo"]["version"]
        assert isinstance(result["capabilities"], dict)
        assert "tools" in result["capabilities"]
        assert "resources" in result["capabilities"] and "prompts" in result["capabilities"]

        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # Nothing answers a notification: only keep-alive comments for a while (MCP spec 2026-07-28, basic#messages).
        comments_before = len(stream.comment_lines)
        silent, ended = stream.collect(1.5)
        assert silent == [] and not ended, silent
        assert len(stream.comment_lines) > comments_before, "no keep-alive comment on an idle stream"

        post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = next_message_event()
        assert listed["jsonrpc"] == "2.0" and listed["id"] == 2, listed
        tools = {tool["name"]: tool for tool in listed["result"]["tools"]}
        assert {"echo", "add_numbers", "slow_steps"} <= set(tools)
        assert tools["echo"]["inputSchema"]["type"] == "object"

        post({"jsonrpc": "2.0", "id": "call-3", "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "hi", "times": 2}}})
        called = next_message_event()
        assert called == {"jsonrpc": "2.0", "id": "call-3",
                          "result": {"content": [{"type": "text", "text": "hi hi"}], "isError": False}}, called

        # Keep-alive comments: ": ping - <UTC timestamp>", each followed by the blank line.
        stream.collect(1.5)
        assert stream.comment_lines, "no keep-alive comment"
        for line in stream.comment_lines:
            match = PING.fullmatch(line)
            assert match, line
            stamp = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
            assert abs((datetime.now(timezone.utc) - stamp).total_seconds()) < 120, line
        assert stream.last_lines[-1] == ""
    finally:
        stream.close()

    # The session ends with its stream (MCP spec 2024-11-05, basic/transports#http-with-sse).
    closed = SseSession(stream, reply.headers, url, [])
    status, body = wait_for_404(server, closed)
    assert status == 404, (status, body)
    assert_jsonrpc_error(body)


def test_post_is_answered_before_the_work_is_done(server: LiveServer, session: SseSession) -> None:
    """
    The POST is answered ``202`` at once (MCP spec 2024-11-05, basic/transports#http-with-sse): the work goes on afterwards, and its
    progress notifications (MCP spec 2026-07-28, basic/patterns/progress; ``progressToken`` echoed, ``progress`` strictly
    increasing up to ``total``) and then its result arrive on the stream.
    """
    message = session.message("tools/call", {"name": "slow_steps", "arguments": {"steps": 5, "delay": 0.3},
                                             "_meta": {"progressToken": "raw-progress"}})
    started = time.monotonic()
    session.accepted(server, message)
    assert time.monotonic() - started < 1.0, "the POST waited for the tool"
    result, skipped = session.stream.wait_for(lambda m: m.get("id") == message["id"])
    assert tool_text(result) == "done 5 steps"
    assert [m["method"] for m in skipped] == ["notifications/progress"] * 5, skipped
    assert [m["params"]["progressToken"] for m in skipped] == ["raw-progress"] * 5
    assert [m["params"]["progress"] for m in skipped] == [1, 2, 3, 4, 5]
    assert {m["params"]["total"] for m in skipped} == {5}


def test_server_to_client_request_rides_the_stream(server: LiveServer, session: SseSession) -> None:
    """
    Server→client requests (MCP spec 2024-11-05, basic/transports#http-with-sse; MCP spec 2026-07-28, client/elicitation): ``elicitation/create`` arrives on the stream as an
    ``event: message`` with a server-minted id; the client POSTs its JSON-RPC response to the
    endpoint (202) and the tool's result follows on the stream.
    """
    message = session.message("tools/call", {"name": "ask_name", "arguments": {}})
    session.accepted(server, message)
    elicit = session.stream.next_message()
    assert elicit["method"] == "elicitation/create", elicit
    assert elicit["params"]["message"] == "What is your name?"
    assert elicit["id"] != message["id"]
    assert session.stream.last_lines[0] == "event: message"
    session.accepted(server, {"jsonrpc": "2.0", "id": elicit["id"],
                              "result": {"action": "accept", "content": {"name": "Linus"}}})
    final = session.stream.next_message()
    assert final["id"] == message["id"], final
    assert tool_text(final) == "Hello, Linus!"


def test_list_changed_notification_rides_the_stream(server: LiveServer, session: SseSession) -> None:
    """Notifications (MCP spec 2024-11-05, basic/transports#http-with-sse; MCP spec 2026-07-28, server/tools): ``notifications/tools/list_changed`` goes on the session's stream."""
    names = {tool["name"] for tool in session.call(server, "tools/list")["result"]["tools"]}
    if "test_trigger_tool_change" not in names:
        pytest.skip(reason="tool 'test_trigger_tool_change' (tests/conformance_app) is not registered")
    message = session.message("tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
    session.accepted(server, message)
    # The notification and the result may come in either order.
    seen = [session.stream.next_message(), session.stream.next_message()]
    [result] = [m for m in seen if m.get("id") == message["id"]]
    assert result["result"]["isError"] is False, result
    [notification] = [m for m in seen if m is not result]
    assert notification.get("method") == "notifications/tools/list_changed", notification
    assert "id" not in notification


def test_batch_on_a_2025_03_26_session(server: LiveServer) -> None:
    """
    Batches (MCP spec 2026-07-28, basic#messages) are part of 2025-03-26 only: on a session that negotiated it, a batch
    POST is accepted (202) and each request's response arrives on the stream.
    """
    session = SseSession.open(server)
    try:
        result = session.initialize(server, version="2025-03-26")
        assert result["protocolVersion"] == "2025-03-26"
        listed, echoed = session.message("tools/list"), session.message(
            "tools/call", {"name": "echo", "arguments": {"text": "batched"}})
        session.accepted(server, [listed, {"jsonrpc": "2.0", "method": "notifications/initialized"}, echoed])
        answers = {}
        while len(answers) < 2:
            message = session.stream.next_message()
            answers[message["id"]] = message
        assert set(answers) == {listed["id"], echoed["id"]}
        assert "echo" in {tool["name"] for tool in answers[listed["id"]]["result"]["tools"]}
        assert tool_text(answers[echoed["id"]]) == "batched"
    finally:
        session.close()


# --- 2. the official SDK's SSE client ----------------------------------------------------------


@pytest.fixture
def sse_url(live_server_mcp: LiveServer) -> str:
    return live_server_mcp.url + "/sse"


@asynccontextmanager
async def connect(url: str, **options: Any) -> AsyncIterator[Client]:
    """The SDK's SSE client in legacy mode, the whole session bounded by ``TIMEOUT`` seconds."""
    async with asyncio.timeout(TIMEOUT):
        async with Client(sse_client(url), mode="legacy", **options) as client:
            yield client


def texts(result: types.CallToolResult | types.GetPromptResult) -> list[str]:
    if isinstance(result, types.GetPromptResult):
        return [message.content.text for message in result.messages if isinstance(message.content, types.TextContent)]
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def test_sdk_initialize_list_and_call_tools(sse_url: str) -> None:
    """
    The SDK's HTTP+SSE client (MCP spec 2024-11-05, basic/transports#http-with-sse): the handshake (MCP spec 2025-11-25, basic/lifecycle#initialization) settles on a handshake
    version and reports the server; ``tools/list`` and ``tools/call`` (MCP spec 2026-07-28, server/tools), including a
    structured result (``structuredContent`` plus its JSON text).
    """
    async with connect(sse_url) as client:
        assert client.protocol_version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
        assert client.server_info is not None and client.server_info.name == SERVER_NAME
        assert client.server_capabilities.tools is not None
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        echoed = await client.call_tool("echo", {"text": "sse", "times": 3})
        added = await client.call_tool("add_numbers", {"numbers": [1, 2, 3, 4]})
    assert {"echo", "add_numbers", "slow_steps", "ask_name"} <= set(tools)
    assert tools["echo"].input_schema["required"] == ["text"]
    assert echoed.is_error is False and texts(echoed) == ["sse sse sse"]
    assert added.is_error is False
    assert added.structured_content == {"total": 10, "count": 4}
    assert [json.loads(text) for text in texts(added)] == [{"total": 10, "count": 4}]


async def test_sdk_progress(sse_url: str) -> None:
    """Progress (MCP spec 2026-07-28, basic/patterns/progress) over HTTP+SSE: one callback per step, ``progress`` strictly increasing."""
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with connect(sse_url) as client:
        result = await client.call_tool("slow_steps", {"steps": 3, "delay": 0.02}, progress_callback=on_progress)
    assert texts(result) == ["done 3 steps"]
    assert [progress for progress, _, _ in updates] == [1, 2, 3], updates
    assert all(total == 3 for _, total, _ in updates)


async def test_sdk_elicitation(sse_url: str) -> None:
    """
    Elicitation (MCP spec 2026-07-28, client/elicitation) over HTTP+SSE: ``elicitation/create`` arrives on the stream, the SDK
    POSTs the callback's answer, and the tool greets it.
    """
    calls: list[types.ElicitRequestParams] = []

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        calls.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with connect(sse_url, elicitation_callback=on_elicit) as client:
        result = await client.call_tool("ask_name", {})
    assert result.is_error is False
    assert texts(result) == ["Hello, Ada!"]
    [params] = calls
    assert params.message == "What is your name?"
    assert params.requested_schema["required"] == ["name"]


async def test_sdk_sampling(sse_url: str) -> None:
    """Sampling (MCP spec 2026-07-28, client/elicitation) over HTTP+SSE: ``sampling/createMessage`` answered by the SDK's callback."""
    seen: list[types.CreateMessageRequestParams] = []

    async def on_sample(context: ClientRequestContext,
                        params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append(params)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="Paris"),
                                         model="test-model", stop_reason="endTurn")

    async with connect(sse_url, sampling_callback=on_sample) as client:
        if "test_sampling" not in {tool.name for tool in (await client.list_tools()).tools}:
            pytest.skip(reason="tool 'test_sampling' (tests/conformance_app) is not registered")
        result = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
    assert texts(result) == ["LLM response: Paris"]
    [params] = seen
    assert params.max_tokens == 100
    assert [message.content.text for message in params.messages] == ["Capital of France?"]


async def test_sdk_resources_and_prompts(sse_url: str) -> None:
    """``resources/read`` (MCP spec 2026-07-28, server/resources: static and templated) and ``prompts/get`` (MCP spec 2026-07-28, server/prompts) over HTTP+SSE."""
    async with connect(sse_url) as client:
        greeting = await client.read_resource("memo://greeting")
        item = await client.read_resource("memo://items/7")
        prompt = await client.get_prompt("summarize", {"topic": "cats", "style": "detailed"})
    [content] = greeting.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.uri == "memo://greeting" and content.text == "Hello from the test app."
    [content] = item.contents
    assert isinstance(content, types.TextResourceContents)
    assert content.mime_type == "application/json"
    assert json.loads(content.text) == {"id": "7", "name": "Item 7"}
    assert texts(prompt) == ["Write a detailed summary of cats."]


# --- 3. bad input ------------------------------------------------------------------------------


BAD_BODIES = {
    # name: (body, status, JSON-RPC error code, error id)
    "malformed JSON": (b'{"jsonrpc": "2.0", "id": 5, "method": ', 400, -32700, None),
    "empty body": (b"", 400, -32700, None),
    "invalid UTF-8": (b'{"jsonrpc": "2.0", "id": 5, "method": "\xff"}', 400, -32700, None),
    "a string": (b'"tools/list"', 400, -32600, None),
    "a number": (b"42", 400, -32600, None),
    "null": (b"null", 400, -32600, None),
    "wrong jsonrpc": (b'{"jsonrpc": "1.0", "id": 9, "method": "tools/list"}', 400, -32600, 9),
    "no jsonrpc": (b'{"id": 9, "method": "tools/list"}', 400, -32600, 9),
    "null id": (b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', 400, -32600, None),
    "batch on 2024-11-05": (b'[{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}]', 400, -32600, None),
    "empty batch": (b"[]", 400, -32600, None),
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_bad_body_is_refused_and_the_session_goes_on(server: LiveServer, session: SseSession, case: str) -> None:
    """
    A POST whose body is not one valid JSON-RPC message (MCP spec 2026-07-28, basic#messages; MCP spec 2024-11-05, basic/transports#http-with-sse) → 400 with a JSON-RPC
    error: ``-32700`` (id null) when it is not JSON, ``-32600`` when it is JSON but not a valid
    message — or a batch, which 2024-11-05 does not have. Nothing of it runs or reaches the stream,
    and the session keeps working.
    """
    body, status, code, request_id = BAD_BODIES[case]
    reply = session.post_raw(server, body)
    assert reply.status == status, (reply.status, reply.raw)
    assert reply.content_type == JSON, reply.headers
    if case in ("wrong jsonrpc", "no jsonrpc"):
        # The id is readable; echoing it or answering with null are both JSON-RPC-compliant.
        assert reply.body.get("id") in (request_id, None), reply.body
        request_id = reply.body.get("id")
    assert_jsonrpc_error(reply.body, code, request_id)
    assert_still_served(server, session)


def test_post_without_session_id(server: LiveServer, session: SseSession) -> None:
    """No ``session_id`` (MCP spec 2024-11-05, basic/transports#http-with-sse, python-sdk convention) → 400 with a JSON-RPC error; the message is not run."""
    message = session.message("tools/call", {"name": "echo", "arguments": {"text": "orphan"}})
    for target in ("/messages/", "/messages/?session_id=", "/messages/?other=1"):
        reply = session.post_raw(server, json.dumps(message).encode(), target=target)
        assert reply.status == 400, (target, reply.status, reply.raw)
        assert_jsonrpc_error(reply.body)
    assert_still_served(server, session)


def test_post_to_unknown_session(server: LiveServer, session: SseSession) -> None:
    """An unknown session (MCP spec 2024-11-05, basic/transports#http-with-sse, python-sdk convention) → 404; a malformed id is refused too (400 or 404)."""
    message = json.dumps(session.message("tools/list")).encode()
    reply = session.post_raw(server, message, target=f"/messages/?session_id={uuid.uuid4().hex}")
    assert reply.status == 404, (reply.status, reply.raw)
    assert_jsonrpc_error(reply.body)
    for odd in ("not-a-session", "x" * 300, "%27%20OR%201%3D1--"):
        reply = session.post_raw(server, message, target=f"/messages/?session_id={odd}")
        assert reply.status in (400, 404), (odd, reply.status, reply.raw)
    assert_still_served(server, session)


def test_wrong_methods(server: LiveServer, session: SseSession) -> None:
    """
    Each endpoint has one method (MCP spec 2024-11-05, basic/transports#http-with-sse): ``GET`` on the POST endpoint and ``POST`` on the
    stream endpoint → 405 with an ``Allow`` header; neither opens a stream nor runs anything.
    """
    reply = send(server, "GET", session.endpoint, headers={"Accept": SSE})
    if reply.stream is not None:
        reply.stream.close()
    assert reply.status == 405, (reply.status, reply.headers)
    assert reply.headers.get("allow") == "POST"

    body = json.dumps(session.message("tools/call", {"name": "echo", "arguments": {"text": "x"}})).encode()
    reply = send(server, "POST", "/sse", body, {"Content-Type": JSON, "Accept": f"{JSON}, {SSE}"})
    if reply.stream is not None:
        reply.stream.close()
    assert reply.status == 405, (reply.status, reply.headers)
    assert reply.headers.get("allow") == "GET"
    assert_still_served(server, session)


def test_foreign_host_and_origin_on_the_stream_endpoint(server: LiveServer) -> None:
    """
    DNS-rebinding protection (MCP spec 2024-11-05, basic/transports#http-with-sse "MUST validate Origin"): ``GET /sse`` with a foreign
    ``Host`` → 421 and with a foreign ``Origin`` → 403, no stream opened; the server's own origin
    is fine.
    """
    for headers, status in (({"Host": FOREIGN_HOST}, 421), ({"Host": f"{FOREIGN_HOST}:{server.port}"}, 421),
                            ({"Origin": FOREIGN_ORIGIN}, 403), ({"Origin": "null"}, 403)):
        reply = send(server, "GET", "/sse", headers={"Accept": SSE, **headers})
        if reply.stream is not None:
            reply.stream.close()
        assert reply.status == status, (headers, reply.status, reply.headers)
        assert reply.content_type != SSE
        assert_jsonrpc_error(reply.body)
    own = SseSession.open(server, headers={"Origin": f"http://127.0.0.1:{server.port}"})
    try:
        own.initialize(server)
        assert_still_served(server, own)
    finally:
        own.close()


def test_foreign_host_and_origin_on_the_messages_endpoint(server: LiveServer, session: SseSession) -> None:
    """
    DNS-rebinding protection (MCP spec 2024-11-05, basic/transports#http-with-sse; MCP security best practices) on the POST endpoint: foreign ``Host`` → 421, foreign
    ``Origin`` → 403, even with a valid session id; the message is not run (nothing on the
    stream); the server's own origin is fine.
    """
    for headers, status in (({"Host": FOREIGN_HOST}, 421), ({"Origin": FOREIGN_ORIGIN}, 403)):
        message = session.message("tools/call", {"name": "echo", "arguments": {"text": "rebound"}})
        reply = session.post(server, message, headers)
        assert reply.status == status, (headers, reply.status, reply.raw)
        assert_jsonrpc_error(reply.body)
    message = session.message("tools/call", {"name": "echo", "arguments": {"text": "own origin"}})
    reply = session.post(server, message, {"Origin": f"http://localhost:{server.port}"})
    assert reply.status == 202, (reply.status, reply.raw)
    response = session.stream.next_message()
    assert response["id"] == message["id"], response
    assert_still_served(server, session)


def test_closed_session_refuses_every_message(server: LiveServer) -> None:
    """
    Session = lifetime of the SSE connection (MCP spec 2024-11-05, basic/transports#http-with-sse): after the stream closes, requests,
    notifications and responses naming the session all get 404; an uninitialized session ends the
    same way.
    """
    session = SseSession.open(server)
    session.initialize(server)
    session.close()
    status, body = wait_for_404(server, session)
    assert status == 404, (status, body)
    for message in ({"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": "srv-1", "result": {}},
                    session.message("tools/list")):
        reply = session.post(server, message)
        assert reply.status == 404, (message, reply.status, reply.raw)

    fresh = SseSession.open(server)
    fresh.close()
    status, body = wait_for_404(server, fresh)
    assert status == 404, (status, body)


# --- 4. cancellation ---------------------------------------------------------------------------


def test_cancelled_request_gets_no_response(server: LiveServer, session: SseSession) -> None:
    """
    Cancellation (MCP spec 2026-07-28, basic/patterns/cancellation): after ``notifications/cancelled`` (202) for a request in flight
    the receiver SHOULD stop the work and not respond: nothing arrives for it on the stream within
    2 s, and the stream keeps serving other requests.
    """
    message = session.message("tools/call", {"name": "wait_forever", "arguments": {}})
    started = time.monotonic()
    session.accepted(server, message)
    assert time.monotonic() - started < 1.0, "the POST waited for the tool"
    time.sleep(0.3)
    session.accepted(server, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": message["id"], "reason": "test"}})
    late, ended = session.stream.collect(2.0)
    assert not ended
    assert not any(m.get("id") == message["id"] for m in late), late
    assert_still_served(server, session, "after the cancellation")


def test_cancellation_stops_progress(server: LiveServer, session: SseSession) -> None:
    """
    Cancellation (MCP spec 2026-07-28, basic/patterns/progress; MCP spec 2026-07-28, basic/patterns/cancellation): a running ``slow_steps`` stops reporting progress once
    cancelled, and never answers.
    """
    message = session.message("tools/call", {"name": "slow_steps", "arguments": {"steps": 40, "delay": 0.1},
                                             "_meta": {"progressToken": "cancel-me"}})
    session.accepted(server, message)
    for expected in (1, 2):
        progress = session.stream.next_message()
        assert progress["method"] == "notifications/progress", progress
        assert progress["params"]["progress"] == expected
    session.accepted(server, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": message["id"]}})
    # Uncancelled, ~20 more progress notifications would arrive in 2 s, and the result in 4 s.
    late, ended = session.stream.collect(2.5)
    assert not ended
    assert not any(m.get("id") == message["id"] for m in late), late
    assert len(late) <= 2, f"the request kept running after the cancellation: {late}"
    assert_still_served(server, session)


def test_cancelling_an_unknown_request_is_harmless(server: LiveServer, session: SseSession) -> None:
    """Cancellation (MCP spec 2026-07-28, basic/patterns/cancellation): the receiver MAY ignore an unknown or finished request id — 202, nothing else."""
    session.accepted(server, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": "never-sent"}})
    assert_still_served(server, session)


# --- 5. sessions: isolation, identity, lifetime ------------------------------------------------


def test_sessions_are_isolated(server: LiveServer) -> None:
    """
    Session = one SSE connection (MCP spec 2024-11-05, basic/transports#http-with-sse): two open sessions each get only their own answers,
    and messages posted for one never appear on the other's stream.
    """
    first, second = SseSession.open(server), SseSession.open(server)
    try:
        assert first.session_id != second.session_id
        first.initialize(server)
        second.initialize(server)
        assert_still_served(server, first, "for the first")
        leaked, _ = second.stream.collect(1.2)
        assert leaked == [], leaked
        assert_still_served(server, second, "for the second")
    finally:
        first.close()
        second.close()


def test_oversized_body_is_refused(server: LiveServer, session: SseSession) -> None:
    """A body over ``MAX_REQUEST_BODY_SIZE`` (4 MiB by default) → 413, and the session goes on."""
    message = session.message("tools/call", {"name": "echo", "arguments": {"text": "x" * (5 * 1024 * 1024)}})
    reply = session.post(server, message)
    assert reply.status == 413, (reply.status, reply.raw[:200])
    assert_still_served(server, session)


def test_streamable_http_session_id_is_unknown_here(server: LiveServer) -> None:
    """
    A ``/messages/`` session is an HTTP+SSE connection (MCP spec 2024-11-05, basic/transports#http-with-sse): an id minted by ``/mcp``'s
    ``initialize`` (MCP spec 2025-11-25, basic/transports#streamable-http) has no stream here to carry the answer, so a POST naming it is an
    unknown session (404) — not a 202 whose answer is never delivered anywhere.
    """
    reply = send(server, "POST", "/mcp", json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "cross", "version": "1"}}}).encode(),
        {"Content-Type": JSON, "Accept": f"{JSON}, {SSE}"})
    assert reply.status == 200, (reply.status, reply.raw)
    mcp_session_id = reply.headers["mcp-session-id"]
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    reply = send(server, "POST", f"/messages/?session_id={mcp_session_id}", json.dumps(message).encode(),
                 {"Content-Type": JSON})
    assert reply.status in (400, 404), (reply.status, reply.raw)


def test_an_open_stream_keeps_its_session_alive(server: LiveServer, sqlite_server_env: Mapping[str, str],
                                                session: SseSession) -> None:
    """
    Session = lifetime of the SSE connection (MCP spec 2024-11-05, basic/transports#http-with-sse). A stream left open and idle for longer
    than ``SESSION_IDLE_TIMEOUT_SECONDS`` (24 h; simulated by backdating the session row's
    ``last_seen_at`` by 25 h) must not leave a half-dead session behind: either the session is
    still served, or — if the server expires it — its stream ends too, so the client knows.
    """
    import sqlite3

    with sqlite3.connect(sqlite_server_env["MCP_TEST_SQLITE"], timeout=20) as db:
        updated = db.execute("UPDATE django_mcp_mcpsession SET last_seen_at = datetime('now', '-25 hours') "
                             "WHERE id = ?", (session.session_id,)).rowcount
    assert updated == 1
    message = session.message("tools/call", {"name": "echo", "arguments": {"text": "next morning"}})
    reply = session.post(server, message)
    if reply.status == 202:
        response, _ = session.stream.wait_for(lambda m: m.get("id") == message["id"])
        assert tool_text(response) == "next morning"
        return
    assert reply.status == 404, (reply.status, reply.raw)
    _, ended = session.stream.collect(3.0)
    assert ended, "the session is gone (POSTs get 404) but its stream is still open, sending keep-alives"


def test_a_normal_flow_logs_no_errors(server: LiveServer, session: SseSession) -> None:
    """
    A request that runs a while and reports progress (MCP spec 2026-07-28, basic/patterns/progress), and one that asks the client
    (MCP spec 2026-07-28, client/elicitation), are ordinary traffic: the server must not log errors or tracebacks for them.
    """
    assert server.log_path is not None
    time.sleep(0.5)
    start = server.log_path.stat().st_size
    message = session.message("tools/call", {"name": "slow_steps", "arguments": {"steps": 3, "delay": 0.1},
                                             "_meta": {"progressToken": "quiet"}})
    session.accepted(server, message)
    result, _ = session.stream.wait_for(lambda m: m.get("id") == message["id"])
    assert tool_text(result) == "done 3 steps"
    message = session.message("tools/call", {"name": "ask_name", "arguments": {}})
    session.accepted(server, message)
    elicit = session.stream.next_message()
    session.accepted(server, {"jsonrpc": "2.0", "id": elicit["id"],
                              "result": {"action": "accept", "content": {"name": "Quiet"}}})
    result, _ = session.stream.wait_for(lambda m: m.get("id") == message["id"])
    assert tool_text(result) == "Hello, Quiet!"
    time.sleep(0.5)
    with server.log_path.open("rb") as log:
        log.seek(start)
        written = log.read().decode(errors="replace")
    assert "Traceback" not in written and " ERROR " not in written, written[-3000:]
