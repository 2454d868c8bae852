"""
No lost answers in batches and no clashing request ids, on both legacy HTTP transports, over real
sockets against live daphne (MCP spec 2025-03-26, basic#batching; basic/utilities/cancellation):

- cancelling one request of a 2025-03-26 batch drops only that entry; the POST still ends;
- a 150-request batch over HTTP+SSE gets 150 answers (the channel layer's per-channel capacity is
  100, and a group send drops what does not fit);
- a request id already in flight in the session is refused instead of taking over its slot.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from tests.transports.sse_client import WAIT, LegacySession, SseSession, call, request


def rpc(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def test_cancelling_one_request_of_a_batch_keeps_the_others(live_server_mcp: Any) -> None:
    session = LegacySession.start(live_server_mcp, version="2025-03-26")
    batch = [rpc(1, "tools/call", {"name": "wait_forever", "arguments": {}}),
             rpc(2, "tools/call", {"name": "echo", "arguments": {"text": "kept"}}),
             rpc(3, "ping")]
    answer: dict[str, Any] = {}

    def post_batch() -> None:
        answer["reply"] = request(live_server_mcp, "POST", batch, session.headers())

    poster = threading.Thread(target=post_batch)
    poster.start()
    time.sleep(0.5)  # the batch is running; wait_forever holds it open
    cancelled = request(live_server_mcp, "POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                  "params": {"requestId": 1, "reason": "test"}}, session.headers())
    assert cancelled.status == 202
    poster.join(WAIT)
    assert not poster.is_alive(), "the batch POST hung after one of its requests was cancelled"
    reply = answer["reply"]
    responses = reply.body if reply.stream is None else reply.stream.read_to_end()
    assert sorted(item["id"] for item in responses) == [2, 3]
    by_id = {item["id"]: item for item in responses}
    assert by_id[2]["result"]["content"][0]["text"] == "kept" and by_id[3]["result"] == {}


def test_an_id_in_flight_is_refused_not_taken_over(live_server_mcp: Any) -> None:
    session = LegacySession.start(live_server_mcp)
    running = request(live_server_mcp, "POST", rpc(7, "tools/call", {
        "name": "slow_steps", "arguments": {"steps": 30, "delay": 0.1}, "_meta": {"progressToken": "t"}}),
        session.headers())
    assert running.stream is not None
    running.stream.next_event(time.monotonic() + WAIT)
    clash = request(live_server_mcp, "POST", rpc(7, "ping"), session.headers())
    assert clash.status == 400 and clash.body["error"]["code"] == -32600
    assert "already in use" in clash.body["error"]["message"]
    # The first request is still the one that id names: cancelling it ends its stream.
    request(live_server_mcp, "POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                      "params": {"requestId": 7}}, session.headers())
    running.stream.read_to_end(timeout=WAIT)
    running.stream.close()
    # Once it has ended, the id may be used again.
    assert call(live_server_mcp, rpc(7, "ping"), session.headers())["result"] == {}


def test_a_150_request_batch_over_http_sse_gets_150_answers(live_server_mcp: Any) -> None:
    session = SseSession.open(live_server_mcp)
    try:
        session.initialize(live_server_mcp, version="2025-03-26")
        batch = [rpc(f"b{n}", "tools/call", {"name": "echo", "arguments": {"text": str(n)}}) for n in range(150)]
        session.accepted(live_server_mcp, batch)
        seen: set[str] = set()
        deadline = time.monotonic() + WAIT
        while len(seen) < 150:
            event = session.stream.next_event(deadline)
            assert event is not None, f"stream ended after {len(seen)} answers"
            if event.get("event") == "message":
                message = json.loads(event["data"])
                seen.add(message.get("id"))
        assert seen == {f"b{n}" for n in range(150)}
    finally:
        session.close()


def test_an_id_in_flight_is_refused_over_http_sse(live_server_mcp: Any) -> None:
    session = SseSession.open(live_server_mcp)
    try:
        session.initialize(live_server_mcp)
        session.accepted(live_server_mcp, rpc(9, "tools/call", {"name": "wait_forever", "arguments": {}}))
        time.sleep(0.2)
        session.accepted(live_server_mcp, rpc(9, "ping"))
        clash, _ = session.stream.wait_for(lambda m: m.get("id") == 9)
        assert clash["error"]["code"] == -32600 and "already in use" in clash["error"]["message"]
        session.accepted(live_server_mcp, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                           "params": {"requestId": 9}})
        # Cancelled: no answer for 9 (MCP spec 2024-11-05, basic/utilities/cancellation); the session serves on.
        assert session.call(live_server_mcp, "ping")["result"] == {}
    finally:
        session.close()
