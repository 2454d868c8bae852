"""
The 2024-11-05 HTTP+SSE transport (MCP spec 2024-11-05, basic/transports#http-with-sse) across two daphne workers, no sticky routing.

The client holds ``GET /sse`` on worker A and POSTs to the endpoint URL on worker B (or on A while
the request runs on B). Both workers run on the ``services`` environment: one PostgreSQL database
(the session row) and one Redis channel layer (``channels_redis``), which carries every message
from the worker that produced it to the worker holding the stream — responses, progress,
server→client requests and the client's answers to them, cancellations, subscriptions. A third
process publishes notifications the way application code would.

Raw HTTP with ``http.client`` and the SSE parser of ``tests/transports/sse_client.py``; every socket
has a timeout and every wait a deadline; the workers send keep-alive comments every second.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping

import pytest

from tests.live import LiveServer
from tests.transports.workers import Workers, publish_from_third_process, tool_text, two_workers
from tests.transports.sse_client import SseSession


@pytest.fixture(scope="module")
def workers(services: Mapping[str, str]) -> Iterator[Workers]:
    """Two daphne processes on the same PostgreSQL database and Redis channel layer."""
    with two_workers(services, keepalive="1", prefix="sse-worker") as started:
        yield started


@pytest.fixture
def logs(workers: Workers) -> Iterator[None]:
    """Print where the worker logs are, so a failing test shows them."""
    print(workers.describe())
    yield


@pytest.fixture
def session(workers: Workers, logs: None) -> Iterator[SseSession]:
    """A stream held by worker A, initialized through worker B (client capabilities: elicitation, sampling)."""
    opened = SseSession.open(workers.a)
    try:
        result = opened.initialize(workers.b, capabilities={"elicitation": {}, "sampling": {}})
        assert result["protocolVersion"] == "2024-11-05"
        yield opened
    finally:
        opened.close()


def echo_via(server: LiveServer, session: SseSession, text: str) -> None:
    """A call POSTed to ``server`` whose answer is the very next message on the session's stream."""
    message = session.message("tools/call", {"name": "echo", "arguments": {"text": text}})
    session.accepted(server, message)
    response = session.stream.next_message()
    assert response.get("id") == message["id"], f"something else arrived on the stream first: {response}"
    assert tool_text(response) == text


# --- the whole flow: stream on A, every POST on B ----------------------------------------------


def test_stream_on_a_serves_every_post_to_b(workers: Workers, logs: None) -> None:
    """
    HTTP+SSE across workers (MCP spec 2024-11-05, basic/transports#http-with-sse): the stream is held by worker A, every POST goes to
    worker B and is answered 202 there; every answer arrives on A's stream as ``event: message``:
    the initialize result (2024-11-05), ``tools/list``, ``tools/call`` echo, progress notifications
    (MCP spec 2026-07-28, basic/patterns/progress) then the result, and ``elicitation/create`` (MCP spec 2026-07-28, client/elicitation), whose JSON-RPC response
    the client POSTs to B, then the greeting. Closing the stream on A ends the session (digest
    2024-11-05 basic/transports#http-with-sse): a POST to B then gets 404 (allowing the workers up to ~2 s to notice).
    """
    a, b = workers.a, workers.b
    session = SseSession.open(a)
    try:
        initialize = session.message("initialize", {"protocolVersion": "2024-11-05",
                                                    "capabilities": {"elicitation": {}},
                                                    "clientInfo": {"name": "two-workers", "version": "1.0"}})
        session.accepted(b, initialize)
        response = session.stream.next_message()
        assert response["id"] == initialize["id"], response
        assert session.stream.last_lines[0] == "event: message"
        assert response["result"]["protocolVersion"] == "2024-11-05"
        assert response["result"]["serverInfo"]["name"] == "django-mcp-tests"
        session.accepted(b, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        listed = session.message("tools/list")
        session.accepted(b, listed)
        response = session.stream.next_message()
        assert response["id"] == listed["id"], response
        assert {"echo", "slow_steps", "ask_name"} <= {tool["name"] for tool in response["result"]["tools"]}

        echo_via(b, session, "across")

        slow = session.message("tools/call", {"name": "slow_steps", "arguments": {"steps": 3, "delay": 0.05},
                                              "_meta": {"progressToken": "p-b"}})
        session.accepted(b, slow)
        result, progress = session.stream.wait_for(lambda m: m.get("id") == slow["id"])
        assert tool_text(result) == "done 3 steps"
        assert [m["method"] for m in progress] == ["notifications/progress"] * 3, progress
        assert [m["params"]["progress"] for m in progress] == [1, 2, 3]
        assert {m["params"]["progressToken"] for m in progress} == {"p-b"}

        ask = session.message("tools/call", {"name": "ask_name", "arguments": {}})
        session.accepted(b, ask)
        elicit = session.stream.next_message()
        assert elicit["method"] == "elicitation/create", elicit
        assert elicit["params"]["message"] == "What is your name?"
        session.accepted(b, {"jsonrpc": "2.0", "id": elicit["id"],
                             "result": {"action": "accept", "content": {"name": "Grace"}}})
        final = session.stream.next_message()
        assert final["id"] == ask["id"], final
        assert tool_text(final) == "Hello, Grace!"
    finally:
        session.close()

    deadline = time.monotonic() + 2.0
    while True:
        reply = session.post(b, session.message("ping"))
        if reply.status == 404 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert reply.status == 404, (reply.status, reply.raw)


# --- the request on B, the client's messages on A ----------------------------------------------


def test_client_answer_posted_to_a_resumes_the_request_on_b(workers: Workers, session: SseSession) -> None:
    """
    Server→client requests (MCP spec 2024-11-05, basic/transports#http-with-sse; MCP spec 2026-07-28, client/elicitation): the tool runs on worker B (where its POST landed);
    its ``elicitation/create`` reaches the stream on A; the client POSTs the answer to A, which
    relays it to the waiting request on B; the result arrives on A's stream.
    """
    a, b = workers.a, workers.b
    ask = session.message("tools/call", {"name": "ask_name", "arguments": {}})
    session.accepted(b, ask)
    elicit = session.stream.next_message()
    assert elicit["method"] == "elicitation/create", elicit
    session.accepted(a, {"jsonrpc": "2.0", "id": elicit["id"],
                         "result": {"action": "accept", "content": {"name": "Hopper"}}})
    final = session.stream.next_message()
    assert final["id"] == ask["id"], final
    assert tool_text(final) == "Hello, Hopper!"


def test_sampling_answer_posted_to_a_resumes_the_request_on_b(workers: Workers, session: SseSession) -> None:
    """Sampling (MCP spec 2026-07-28, client/elicitation) across workers: ``sampling/createMessage`` on A's stream, answered through A."""
    a, b = workers.a, workers.b
    names = {tool["name"] for tool in session.call(b, "tools/list")["result"]["tools"]}
    if "test_sampling" not in names:
        pytest.skip(reason="tool 'test_sampling' (tests/conformance_app) is not registered")
    call = session.message("tools/call", {"name": "test_sampling", "arguments": {"prompt": "Capital of France?"}})
    session.accepted(b, call)
    sample = session.stream.next_message()
    assert sample["method"] == "sampling/createMessage", sample
    assert sample["params"]["maxTokens"] == 100
    session.accepted(a, {"jsonrpc": "2.0", "id": sample["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"}})
    final = session.stream.next_message()
    assert final["id"] == call["id"], final
    assert tool_text(final) == "LLM response: Paris"


def test_cancellation_posted_to_a_stops_the_request_on_b(workers: Workers, session: SseSession) -> None:
    """
    Cancellation (MCP spec 2026-07-28, basic/patterns/cancellation) across workers: ``slow_steps`` runs on worker B and reports progress
    on A's stream; ``notifications/cancelled`` is POSTed to A (202). Progress stops, no response
    arrives for the request, and the session keeps working.
    """
    a, b = workers.a, workers.b
    call = session.message("tools/call", {"name": "slow_steps", "arguments": {"steps": 40, "delay": 0.1},
                                          "_meta": {"progressToken": "cancel-across"}})
    session.accepted(b, call)
    for expected in (1, 2):
        progress = session.stream.next_message()
        assert progress["method"] == "notifications/progress", progress
        assert progress["params"]["progress"] == expected
    session.accepted(a, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": call["id"], "reason": "test"}})
    # Uncancelled, ~20 more progress notifications would arrive in 2 s, and the result in 4 s.
    late, ended = session.stream.collect(2.5)
    assert not ended
    assert not any(m.get("id") == call["id"] for m in late), late
    assert len(late) <= 2, f"the request kept running after the cancellation: {late}"
    echo_via(a, session, "after the cancellation")
    echo_via(b, session, "and on B")


# --- notifications from elsewhere --------------------------------------------------------------


def test_subscription_made_on_b_reaches_the_stream_on_a(workers: Workers, session: SseSession) -> None:
    """
    Resource subscriptions (MCP spec 2024-11-05, basic/transports#http-with-sse; MCP spec 2026-07-28, server/resources): after ``resources/subscribe`` POSTed to worker B,
    ``notifications/resources/updated`` for that URI — announced by a third process — arrives on
    the stream held by A; updates of other URIs do not.
    """
    subscribed = session.call(workers.b, "resources/subscribe", {"uri": "memo://greeting"})
    assert subscribed.get("result") == {}, subscribed
    publish_from_third_process(
        workers.env,
        "from django_mcp.notifications import notify_resource_updated",
        "notify_resource_updated('memo://items/1')",
        "notify_resource_updated('memo://greeting')",
    )
    message = session.stream.next_message()
    assert message["method"] == "notifications/resources/updated", message
    assert message["params"]["uri"] == "memo://greeting"
    assert session.stream.last_lines[0] == "event: message"


def test_list_changed_from_a_third_process_reaches_the_stream_on_a(workers: Workers, session: SseSession) -> None:
    """List-changed notifications (MCP spec 2024-11-05, basic/transports#http-with-sse; MCP spec 2026-07-28, server/prompts): ``notify_list_changed`` in any process reaches the stream."""
    publish_from_third_process(workers.env, "from django_mcp.notifications import notify_list_changed",
                               "notify_list_changed('prompts')")
    message = session.stream.next_message()
    assert message["method"] == "notifications/prompts/list_changed", message
    assert "id" not in message


# --- two sessions, two workers -----------------------------------------------------------------


def test_sessions_on_both_workers_stay_apart(workers: Workers, logs: None) -> None:
    """
    Session = one SSE connection (MCP spec 2024-11-05, basic/transports#http-with-sse): with one stream on each worker and each session's
    POSTs sent to the other worker, every answer reaches its own stream and nothing crosses over.
    """
    a, b = workers.a, workers.b
    on_a, on_b = SseSession.open(a), SseSession.open(b)
    try:
        on_a.initialize(b)
        on_b.initialize(a)
        echo_via(b, on_a, "for the stream on A")
        echo_via(a, on_b, "for the stream on B")
        for session in (on_a, on_b):
            leaked, ended = session.stream.collect(1.2)
            assert leaked == [] and not ended, leaked
    finally:
        on_a.close()
        on_b.close()


# --- nothing dropped between workers (issue 11) ------------------------------------------------


def test_a_500_request_batch_posted_to_b_gets_500_answers_on_a(workers: Workers, logs: None) -> None:
    """
    Every answer reaches the stream on A, however fast B produces them: they are sent to the
    stream's channel with backpressure, not through a group send, which drops what exceeds the
    channel's capacity (100 by default; before the fix about a third of these went missing).
    """
    session = SseSession.open(workers.a)
    try:
        session.initialize(workers.b, version="2025-03-26")
        batch = [session.message("ping") for _ in range(500)]
        session.accepted(workers.b, batch)
        wanted = {message["id"] for message in batch}
        seen = set()
        deadline = time.monotonic() + 30
        while seen != wanted:
            event = session.stream.next_event(deadline)
            assert event is not None, f"stream ended after {len(seen)} answers"
            if event.get("event") == "message":
                seen.add(json.loads(event["data"]).get("id"))
    finally:
        session.close()


def test_in_a_batch_the_first_answer_does_not_tear_down_the_others(workers: Workers, logs: None) -> None:
    """
    A batch POSTed to B holds a quick request and one that asks the client (elicitation) and waits:
    the quick one ending must not take the session's group away from the waiting one, whose
    answer the client POSTs to A and A relays to B.
    """
    session = SseSession.open(workers.a)
    try:
        session.initialize(workers.b, version="2025-03-26", capabilities={"elicitation": {}})
        ask = session.message("tools/call", {"name": "ask_name", "arguments": {}})
        # Ends half a second in: after the ask has joined the session's group to hear the answer.
        quick = session.message("tools/call", {"name": "slow_steps", "arguments": {"steps": 1, "delay": 0.5}})
        session.accepted(workers.b, [ask, quick])
        seen: dict[str, dict] = {}
        while len(seen) < 2:  # the quick answer and the elicitation request, in either order
            message = session.stream.next_message()
            if message.get("method") == "elicitation/create":
                seen["elicitation"] = message
            elif message.get("id") == quick["id"]:
                seen["quick"] = message
        elicitation = seen["elicitation"]
        time.sleep(0.3)  # the quick one has ended, and with it (before the fix) the POST's groups
        session.accepted(workers.a, {"jsonrpc": "2.0", "id": elicitation["id"],
                                     "result": {"action": "accept", "content": {"name": "Ada"}}})
        answer, _ = session.stream.wait_for(lambda m: m.get("id") == ask["id"], timeout=10)
        assert tool_text(answer) == "Hello, Ada!"
    finally:
        session.close()
