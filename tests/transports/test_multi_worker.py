"""
Two daphne workers, one client, no sticky routing.

Both workers run on the ``services`` environment: one PostgreSQL database (legacy session state)
and one Redis-backed channel layer (``channels_redis``), which carries everything that has to
cross processes: answers to server→client requests, subscription changes, list-changed and
resource-updated notifications. A third process — ``python -c`` with the same environment —
publishes notifications the way application code would (``django_mcp.notifications``), which
proves that nothing depends on the publisher being one of the workers.

Everything is raw HTTP with the standard library (``http.client``) and a small incremental SSE
parser, so the tests see exactly what goes over the wire. Every socket has a timeout and every
wait a deadline; the workers send SSE keep-alive comments every 2 s so the deadlines are checked
often.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.live import LiveServer
from tests.transports.workers import Workers, publish_from_third_process, tool_text, two_workers
from tests.transports.sse_client import SSE, LegacySession, Reply, SSEStream, request


MODERN = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workers(services: Mapping[str, str]) -> Iterator[Workers]:
    """Two daphne processes on the same PostgreSQL database and Redis channel layer."""
    with two_workers(services, keepalive="2", prefix="worker") as started:
        yield started


@pytest.fixture
def logs(workers: Workers) -> Iterator[None]:
    """Print where the worker logs are, so a failing test shows them."""
    print(workers.describe())
    yield


def modern_call(server: LiveServer, request_id: Any, method: str, params: dict[str, Any]) -> Reply:
    """A stateless 2026-07-28 request with its envelope and mirrored headers (MCP spec 2026-07-28, basic/transports/streamable-http)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "multi-worker-test", "version": "1.0"}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if method in ("tools/call", "prompts/get"):
        headers["Mcp-Name"] = params["name"]
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    return request(server, "POST", message, headers)


def require_tool(names: set[str], name: str) -> None:
    if name not in names:
        pytest.skip(reason=f"tool {name!r} (tests/conformance_app) is not registered on the server")


# --- (a) one session, any worker ---------------------------------------------------------------


def test_legacy_session_is_served_by_any_worker(workers: Workers, logs: None) -> None:
    """
    Sessions (MCP spec 2025-11-25, basic/transports#streamable-http): the client echoes ``Mcp-Session-Id`` on every request, so with state in
    the shared store a session started on worker A is served by worker B. After DELETE, requests
    naming the session MUST get 404 — on every worker, not just the one that deleted it: at once on
    the worker that deleted it, and on the others as soon as the announcement crosses the channel
    layer (a request racing it on a loaded machine may still be served; SESSION_CACHE_SECONDS = 0
    closes that window). What must never happen is a worker serving it afterwards.
    """
    a, b = workers.a, workers.b
    session = LegacySession.start(a, initialized_on=b)

    tools = session.call(b, "tools/list")
    assert {"echo", "add_numbers", "ask_name"} <= {tool["name"] for tool in tools["result"]["tools"]}
    echoed = session.call(b, "tools/call", {"name": "echo", "arguments": {"text": "cross", "times": 2}})
    assert tool_text(echoed) == "cross cross"
    assert echoed["result"]["isError"] is False
    read = session.call(a, "resources/read", {"uri": "memo://greeting"})
    assert read["result"]["contents"][0]["text"] == "Hello from the test app."

    deleted = request(b, "DELETE", headers=session.headers())
    assert 200 <= deleted.status < 300, (deleted.status, deleted.body)

    def refused(server: LiveServer) -> bool:
        return request(server, "POST", session.message("tools/list"), session.headers()).status == 404

    assert refused(b)
    assert soon(lambda: refused(a))
    for server in (a, b) * 5:
        after = request(server, "POST", session.message("tools/list"), session.headers())
        assert after.status == 404, (server.name, after.status, after.body)
        get = request(server, "GET", headers={"Accept": SSE, **session.headers()})
        if get.stream is not None:
            get.stream.close()
        assert get.status == 404, (server.name, get.status)


def logged_levels(server: LiveServer, session: LegacySession) -> list[str]:
    """Call the conformance logging tool and return the levels of the log messages it streamed."""
    message = session.message("tools/call", {"name": "test_logging_tool", "arguments": {}})
    reply = request(server, "POST", message, session.headers())
    assert reply.status == 200, (reply.status, reply.body)
    if reply.stream is None:
        return []
    try:
        _, before = reply.stream.wait_for(lambda m: m.get("id") == message["id"] and "method" not in m)
    finally:
        reply.stream.close()
    return [m["params"]["level"] for m in before if m.get("method") == "notifications/message"]


def soon(check: Any, seconds: float = 2.0) -> bool:
    """Whether ``check()`` holds within ``seconds`` (the announcement crosses the channel layer)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_change_on_one_worker_reaches_the_other_workers_cached_session(workers: Workers, logs: None) -> None:
    """
    Each worker keeps the sessions it has read (transports/session_cache.py). A change made on
    another worker — here ``logging/setLevel`` (MCP spec 2025-11-25, server/utilities/logging) —
    is announced over the channel layer, so the first worker obeys it as soon as the announcement
    arrives: a request racing it on a loaded machine may still see the old level, hence the short
    wait; what must never happen is falling back afterwards (the loop at the end).
    """
    a, b = workers.a, workers.b
    session = LegacySession.start(a, initialized_on=b)
    assert logged_levels(a, session) == ["debug", "info", "warning"]  # A now holds the session
    assert logged_levels(b, session) == ["debug", "info", "warning"]  # and so does B
    assert session.call(b, "logging/setLevel", {"level": "warning"})["result"] == {}
    assert soon(lambda: logged_levels(a, session) == ["warning"])
    assert session.call(a, "logging/setLevel", {"level": "error"})["result"] == {}
    assert soon(lambda: logged_levels(b, session) == [])
    for _ in range(20):  # and again and again: no worker falls back to what it held before
        assert logged_levels(a, session) == [] and logged_levels(b, session) == []


def test_delete_on_b_ends_the_get_stream_on_a(workers: Workers, logs: None) -> None:
    """
    Session termination (MCP spec 2025-11-25, basic/transports#streamable-http): once a session is deleted its GET stream has nothing left
    to carry; django_mcp ends it on whichever worker holds it (the DELETE on worker B reaches the
    stream on worker A over the channel layer) instead of leaving a dead stream open.
    """
    session = LegacySession.start(workers.a)
    stream = session.open_get_stream(workers.a)
    try:
        deleted = request(workers.b, "DELETE", headers=session.headers())
        assert 200 <= deleted.status < 300, (deleted.status, deleted.body)
        assert stream.read_to_end() == []
    finally:
        stream.close()


# --- (b) list_changed across workers -----------------------------------------------------------


def test_get_stream_on_a_receives_list_changed_triggered_on_b(workers: Workers, logs: None) -> None:
    """
    List-changed notifications (MCP spec 2025-11-25, basic/transports#streamable-http; MCP spec 2026-07-28, server/tools): unsolicited notifications go on the session's
    GET stream; a tool run on worker B announcing a change reaches the stream held by worker A.
    """
    a, b = workers.a, workers.b
    session = LegacySession.start(a)
    require_tool({tool["name"] for tool in session.call(b, "tools/list")["result"]["tools"]},
                 "test_trigger_tool_change")
    stream = session.open_get_stream(a)
    try:
        response = session.call(b, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
        assert response["result"]["isError"] is False
        message = stream.next_message()
        assert message["method"] == "notifications/tools/list_changed", message
        assert "id" not in message
    finally:
        stream.close()


def test_get_stream_on_a_receives_list_changed_from_a_third_process(workers: Workers, logs: None) -> None:
    """
    List-changed notifications (MCP spec 2025-11-25, basic/transports#streamable-http): ``notify_list_changed`` called in any process on the
    same channel layer — here neither worker — reaches the session's GET stream on worker A.
    """
    session = LegacySession.start(workers.a, initialized_on=workers.b)
    assert session.capabilities["prompts"].get("listChanged") is True
    stream = session.open_get_stream(workers.a)
    try:
        publish_from_third_process(workers.env, "from django_mcp.notifications import notify_list_changed",
                                   "notify_list_changed('prompts')")
        message = stream.next_message()
        assert message["method"] == "notifications/prompts/list_changed", message
    finally:
        stream.close()


# --- (c) a server→client request answered through the other worker -----------------------------


def test_elicitation_answer_posted_to_b_resumes_the_request_on_a(workers: Workers, logs: None) -> None:
    """
    Server→client requests (MCP spec 2025-11-25, basic/transports#streamable-http; MCP spec 2026-07-28, client/elicitation): ``elicitation/create`` rides the SSE stream of the
    POST that caused it (worker A); the client answers with a separate POST of the JSON-RPC
    response — here to worker B, which MUST accept it with 202 — and the original stream on A
    then carries the tool's final result.
    """
    a, b = workers.a, workers.b
    session = LegacySession.start(a, client_capabilities={"elicitation": {}})
    call_message = session.message("tools/call", {"name": "ask_name", "arguments": {}})
    reply = request(a, "POST", call_message, session.headers())
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.content_type, reply.body)
    stream = reply.stream
    try:
        elicit, skipped = stream.wait_for(lambda m: "method" in m and "id" in m)
        assert elicit["method"] == "elicitation/create", elicit
        assert elicit["params"]["message"] == "What is your name?"
        assert elicit["params"]["requestedSchema"]["required"] == ["name"]
        assert all("id" not in m or m["id"] != call_message["id"] for m in skipped)

        answer = {"jsonrpc": "2.0", "id": elicit["id"], "result": {"action": "accept", "content": {"name": "Grace"}}}
        accepted = request(b, "POST", answer, session.headers())
        assert accepted.status == 202, (accepted.status, accepted.body)

        final, _ = stream.wait_for(lambda m: m.get("id") == call_message["id"])
        assert tool_text(final) == "Hello, Grace!"
        assert final["result"]["isError"] is False
        # The stream SHOULD end after the response (MCP spec 2025-11-25, basic/transports#streamable-http).
        assert stream.read_to_end() == []
    finally:
        stream.close()


def test_cancellation_posted_to_b_stops_the_request_on_a(workers: Workers, logs: None) -> None:
    """
    Cancellation (MCP spec 2026-07-28, basic/patterns/cancellation): ``notifications/cancelled`` (202) names a request in flight; the
    receiver SHOULD stop the work and not respond. The request runs on worker A and reports
    progress on its SSE stream (MCP spec 2026-07-28, basic/patterns/progress); the cancellation is POSTed to worker B. Progress
    then stops and no response for the request arrives.
    """
    a, b = workers.a, workers.b
    session = LegacySession.start(a)
    call_message = session.message("tools/call", {"name": "slow_steps", "arguments": {"steps": 60, "delay": 0.1},
                                                  "_meta": {"progressToken": "cancel-me"}})
    reply = request(a, "POST", call_message, session.headers())
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.content_type, reply.body)
    stream = reply.stream
    try:
        for expected in (1, 2):
            progress = stream.next_message()
            assert progress["method"] == "notifications/progress", progress
            assert progress["params"]["progressToken"] == "cancel-me"
            assert progress["params"]["progress"] == expected
        cancelled = request(b, "POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                        "params": {"requestId": call_message["id"], "reason": "test"}},
                            session.headers())
        assert cancelled.status == 202, (cancelled.status, cancelled.body)
        # Uncancelled, ~40 more progress notifications and the result would arrive in 4 s.
        late, ended = stream.collect(4.0)
        assert not any(m.get("id") == call_message["id"] for m in late), late
        assert len(late) <= 2, f"the request kept running after the cancellation: {late}"
        # With no response to send, the server still ends the exchange rather than hold it open.
        assert ended, "the stream of the cancelled request stayed open"
    finally:
        stream.close()


# --- (d) resource subscriptions across workers and processes -----------------------------------


def test_subscription_made_on_b_reaches_get_stream_on_a(workers: Workers, logs: None) -> None:
    """
    Legacy resource subscriptions (MCP spec 2026-07-28, server/resources): after ``resources/subscribe`` (here on worker B)
    the server sends ``notifications/resources/updated`` on the session's GET stream (here held by
    worker A) when that resource changes — announced by a third process. Updates of URIs the
    session did not subscribe to are not sent.
    """
    a, b = workers.a, workers.b
    session = LegacySession.start(a)
    assert session.capabilities["resources"].get("subscribe") is True
    stream = session.open_get_stream(a)
    try:
        subscribed = session.call(b, "resources/subscribe", {"uri": "memo://greeting"})
        assert subscribed.get("result") == {}, subscribed
        publish_from_third_process(
            workers.env,
            "from django_mcp.notifications import notify_resource_updated",
            "notify_resource_updated('memo://items/1')",
            "notify_resource_updated('memo://greeting')",
        )
        message = stream.next_message()
        assert message["method"] == "notifications/resources/updated", message
        assert message["params"]["uri"] == "memo://greeting"
    finally:
        stream.close()


def test_subscription_is_restored_on_a_get_stream_opened_later(workers: Workers, logs: None) -> None:
    """
    Legacy resource subscriptions (MCP spec 2026-07-28, server/resources) belong to the session, not to a connection: a
    subscription made on worker B before any GET stream exists still applies to the stream the
    client opens afterwards on worker A.
    """
    a, b = workers.a, workers.b
    session = LegacySession.start(b)
    subscribed = session.call(b, "resources/subscribe", {"uri": "memo://items/42"})
    assert subscribed.get("result") == {}, subscribed
    stream = session.open_get_stream(a)
    try:
        publish_from_third_process(workers.env, "from django_mcp.notifications import notify_resource_updated",
                                   "notify_resource_updated('memo://items/42')")
        message = stream.next_message()
        assert message["method"] == "notifications/resources/updated", message
        assert message["params"]["uri"] == "memo://items/42"
    finally:
        stream.close()


# --- (e) 2026-07-28 subscriptions/listen across workers ----------------------------------------


def _open_listen(server: LiveServer, listen_id: str, notifications: dict[str, Any]) -> SSEStream:
    reply = modern_call(server, listen_id, "subscriptions/listen", {"notifications": notifications})
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.content_type, reply.body)
    assert reply.headers.get("x-accel-buffering") == "no"
    return reply.stream


def test_listen_stream_on_a_receives_list_changed_published_elsewhere(workers: Workers, logs: None) -> None:
    """
    ``subscriptions/listen`` (MCP spec 2026-07-28, basic/patterns/subscriptions): the first message is
    ``notifications/subscriptions/acknowledged`` with the honoured filter and
    ``_meta["io.modelcontextprotocol/subscriptionId"]`` = the listen request's id; every later
    notification carries the same tag; types the client did not request are never sent. The
    changes come from worker B (right after the ack) and from a third process.
    """
    a, b = workers.a, workers.b
    listed = modern_call(b, 1, "tools/list", {})
    assert listed.status == 200 and listed.body is not None, (listed.status, listed.content_type)
    require_tool({tool["name"] for tool in listed.body["result"]["tools"]}, "test_trigger_tool_change")
    listen_id = f"listen-{uuid.uuid4().hex[:8]}"
    stream = _open_listen(a, listen_id, {"toolsListChanged": True})
    try:
        ack = stream.next_message()
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
        assert "id" not in ack
        assert ack["params"]["_meta"][SUBSCRIPTION_ID] == listen_id
        assert ack["params"]["notifications"] == {"toolsListChanged": True}

        # From worker B, immediately after the ack: the subscription must already be in place.
        triggered = modern_call(b, 7, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
        if triggered.stream is not None:
            triggered.body = triggered.stream.read_to_end()[-1]
            triggered.stream.close()
        assert triggered.status == 200, (triggered.status, triggered.body)
        assert triggered.body["result"]["isError"] is False, triggered.body
        message = stream.next_message()
        assert message["method"] == "notifications/tools/list_changed", message
        assert message["params"]["_meta"][SUBSCRIPTION_ID] == listen_id

        # From a third process; the prompts change was not asked for and must not be delivered.
        publish_from_third_process(
            workers.env,
            "from django_mcp.notifications import notify_list_changed",
            "notify_list_changed('prompts')",
            "notify_list_changed('tools')",
        )
        message = stream.next_message()
        assert message["method"] == "notifications/tools/list_changed", message
        assert message["params"]["_meta"][SUBSCRIPTION_ID] == listen_id
    finally:
        stream.close()


def test_listen_stream_on_a_receives_resource_updates_from_a_third_process(workers: Workers, logs: None) -> None:
    """
    ``subscriptions/listen`` with ``resourceSubscriptions`` (MCP spec 2026-07-28, basic/patterns/subscriptions) replaces
    ``resources/subscribe`` in 2026-07-28: updates of the listed URIs arrive tagged with the
    subscription id; other URIs are not sent.
    """
    listen_id = f"listen-{uuid.uuid4().hex[:8]}"
    stream = _open_listen(workers.a, listen_id, {"resourceSubscriptions": ["memo://greeting"]})
    try:
        ack = stream.next_message()
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
        assert ack["params"]["_meta"][SUBSCRIPTION_ID] == listen_id
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["memo://greeting"]}
        publish_from_third_process(
            workers.env,
            "from django_mcp.notifications import notify_resource_updated",
            "notify_resource_updated('memo://items/1')",
            "notify_resource_updated('memo://greeting')",
        )
        message = stream.next_message()
        assert message["method"] == "notifications/resources/updated", message
        assert message["params"]["uri"] == "memo://greeting"
        assert message["params"]["_meta"][SUBSCRIPTION_ID] == listen_id
    finally:
        stream.close()


def test_stream_closed_on_a_is_resumed_on_b(workers: Workers, logs: None) -> None:
    """
    Resumability across workers (MCP spec 2025-11-25, basic/transports#streamable-http): the call runs on A, whose server closes the stream
    mid-call; the client reconnects to B with Last-Event-ID and B delivers the result, which A
    stored and published after the connection ended.
    """
    session = LegacySession.start(workers.a)
    message = session.message("tools/call", {"name": "test_reconnection", "arguments": {}})
    reply = request(workers.a, "POST", message, session.headers())
    assert reply.stream is not None
    priming = reply.stream.next_event(time.monotonic() + 15)
    assert priming is not None and priming.get("data") == ""
    reply.stream.close()
    resumed = request(workers.b, "GET", headers={"Accept": SSE, "Last-Event-ID": priming["id"], **session.headers()})
    assert resumed.status == 200 and resumed.stream is not None
    result = resumed.stream.next_message()
    resumed.stream.close()
    assert result["id"] == message["id"]
    assert result["result"]["content"][0]["text"] == "Reconnection test completed successfully"


def test_concurrent_subscribes_on_both_workers_keep_each_other(workers: Workers, logs: None) -> None:
    """
    ``resources/subscribe`` calls of one session arriving together on both workers all stick: the
    store adds each URI atomically (a row lock on PostgreSQL) instead of writing back a list read
    earlier, which lost the other worker's additions.
    """
    from concurrent.futures import ThreadPoolExecutor

    import psycopg

    session = LegacySession.start(workers.a)
    uris = [f"memo://items/{n}" for n in range(24)]
    messages = [session.message("resources/subscribe", {"uri": uri}) for uri in uris]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda pair: request(pair[0], "POST", pair[1], session.headers()),
                                [((workers.a, workers.b)[n % 2], message) for n, message in enumerate(messages)]))
    assert all(answer.status == 200 and answer.body.get("result") == {} for answer in answers), answers
    dsn = f"host=127.0.0.1 port=5432 user=postgres dbname={workers.env['MCP_TEST_PG_NAME']}"
    with psycopg.connect(dsn) as connection:
        stored = connection.execute("SELECT subscriptions FROM django_mcp_mcpsession WHERE id = %s",
                                    [session.id.partition(".")[0]]).fetchone()[0]
    assert sorted(stored) == sorted(uris)
