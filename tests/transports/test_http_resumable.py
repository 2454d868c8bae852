"""
Resumable POST streams of legacy sessions (MCP spec 2025-11-25, basic/transports#streamable-http; 2025-11-25 polling, SEP-1699), over real
sockets against a live daphne server: the priming event, event ids, ``retry:``, a stream the server
closes mid-call, a client that drops mid-stream, and replay with ``Last-Event-ID``.
"""

from __future__ import annotations

import time
from typing import Any

from tests.transports.sse_client import SSE, WAIT, LegacySession, request


def tool_call(session: LegacySession, name: str, arguments: dict[str, Any], progress: str | None = None
              ) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if progress is not None:
        params["_meta"] = {"progressToken": progress}
    return session.message("tools/call", params)


def resume(server: Any, session: LegacySession, last_event_id: str):
    return request(server, "GET", headers={"Accept": SSE, "Last-Event-ID": last_event_id, **session.headers()})


def test_priming_event_opens_every_sse_stream_of_a_2025_11_25_session(live_server_mcp: Any) -> None:
    """2025-11-25: the first event has an id and empty data, with a retry delay; later events have ids."""
    session = LegacySession.start(live_server_mcp)
    reply = request(live_server_mcp, "POST", tool_call(session, "slow_steps", {"steps": 2, "delay": 0.01}, "p"),
                    session.headers())
    assert reply.stream is not None
    deadline = time.monotonic() + WAIT
    priming = reply.stream.next_event(deadline)
    assert priming is not None and priming.get("data") == "" and "retry" in priming
    stream_id, _, seq = priming["id"].rpartition(".")
    assert stream_id and seq == "0"
    ids = []
    while (event := reply.stream.next_event(deadline)) is not None:
        ids.append(event["id"])
    reply.stream.close()
    assert ids == [f"{stream_id}.{n}" for n in (1, 2, 3)]  # two progress notifications, then the result


def test_no_priming_for_older_revisions(live_server_mcp: Any) -> None:
    """Clients before 2025-11-25 do not expect empty-data events; their streams carry no ids."""
    session = LegacySession.start(live_server_mcp, version="2025-06-18")
    reply = request(live_server_mcp, "POST", tool_call(session, "slow_steps", {"steps": 2, "delay": 0.01}, "p"),
                    session.headers())
    assert reply.stream is not None
    deadline = time.monotonic() + WAIT
    events = []
    while (event := reply.stream.next_event(deadline)) is not None:
        events.append(event)
    reply.stream.close()
    assert len(events) == 3 and all("id" not in event and event["data"] for event in events)


def test_stream_closed_by_the_server_is_resumed_with_last_event_id(live_server_mcp: Any) -> None:
    """``ctx.close_sse_stream()`` ends the connection, not the call; GET + Last-Event-ID gets the result."""
    session = LegacySession.start(live_server_mcp)
    message = tool_call(session, "test_reconnection", {})
    priming_id = _priming_then_closed(live_server_mcp, session, message)
    resumed = resume(live_server_mcp, session, priming_id)
    assert resumed.status == 200 and resumed.stream is not None
    result = resumed.stream.next_message()
    assert resumed.stream.read_to_end() == []  # the final response ends the resumed stream
    resumed.stream.close()
    assert result["id"] == message["id"]
    assert result["result"]["content"][0]["text"] == "Reconnection test completed successfully"


def _priming_then_closed(server: Any, session: LegacySession, message: dict[str, Any]) -> str:
    """POST a call whose stream the server closes at once; return the priming event's id."""
    reply = request(server, "POST", message, session.headers())
    assert reply.stream is not None
    priming = reply.stream.next_event(time.monotonic() + WAIT)
    assert priming is not None and priming.get("data") == ""
    assert reply.stream.read_to_end() == []  # closed before any message
    reply.stream.close()
    return priming["id"]


def test_client_that_drops_mid_stream_gets_the_rest_on_reconnect(live_server_mcp: Any) -> None:
    """Disconnection is not cancellation (MCP spec 2026-07-28, basic/patterns/cancellation): the call goes on and its events are replayed."""
    session = LegacySession.start(live_server_mcp)
    message = tool_call(session, "slow_steps", {"steps": 6, "delay": 0.2}, "drop")
    reply = request(live_server_mcp, "POST", message, session.headers())
    assert reply.stream is not None
    deadline = time.monotonic() + WAIT
    reply.stream.next_event(deadline)  # priming
    first = reply.stream.next_event(deadline)
    assert first is not None and '"progress":1' in first["data"]
    reply.stream.close()  # the client goes away after the first progress notification
    time.sleep(0.5)
    resumed = resume(live_server_mcp, session, first["id"])
    assert resumed.stream is not None
    messages = resumed.stream.read_to_end()
    resumed.stream.close()
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    # The store keeps only a stream's latest progress (a long task must not leave a row per
    # step), so steps made while nobody listened collapse into the last of them; from the resume
    # on, every step arrives. Nothing repeated, nothing out of order, and the answer at the end.
    assert progress and progress[0] >= 2 and progress[-1] == 6 and progress == sorted(set(progress))
    assert progress == list(range(progress[0], 7))
    assert messages[-1]["id"] == message["id"] and messages[-1]["result"]["content"][0]["text"] == "done 6 steps"


def test_unknown_last_event_id_is_400(live_server_mcp: Any) -> None:
    session = LegacySession.start(live_server_mcp)
    for value in ("not-an-id", "0123456789abcdef.3"):
        reply = resume(live_server_mcp, session, value)
        assert reply.status == 400, (value, reply.status)
        assert reply.body["error"]["code"] == -32600


def test_another_sessions_stream_cannot_be_resumed(live_server_mcp: Any) -> None:
    """Event ids are scoped to their session: another session sees no such stream."""
    owner, other = LegacySession.start(live_server_mcp), LegacySession.start(live_server_mcp)
    priming_id = _priming_then_closed(live_server_mcp, owner, tool_call(owner, "test_reconnection", {}))
    reply = resume(live_server_mcp, other, priming_id)
    assert reply.status == 400
