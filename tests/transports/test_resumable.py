"""
Resumed streams lose nothing and never hang (``django_mcp.transports.resumable``; MCP spec
2025-11-25, basic/transports#resumability-and-redelivery), over real sockets against live daphne:
a client resuming before the server noticed its old connection die, a resume at the final event,
of a cancelled request, of a session that ends, and of a request whose worker was killed.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.live import LiveServer
from tests.transports.sse_client import WAIT, LegacySession, request
from tests.transports.test_http_resumable import resume, tool_call


@pytest.fixture
def own_server(sqlite_server_env: Mapping[str, str]) -> Iterator[LiveServer]:
    """A server of this test's own, which it may kill; liveness probes give up after 1 s."""
    with LiveServer(env={**sqlite_server_env, "MCP_TEST_LIVENESS": "1"}, name="resume-kill") as server:
        yield server


def start_streaming(server: Any, session: LegacySession, steps: int, delay: float) -> tuple[Any, dict[str, Any], str]:
    """POST a slow call and read its priming event and first progress; the stream stays open."""
    message = tool_call(session, "slow_steps", {"steps": steps, "delay": delay}, "p")
    reply = request(server, "POST", message, session.headers())
    assert reply.stream is not None, (reply.status, reply.body)
    deadline = time.monotonic() + WAIT
    assert reply.stream.next_event(deadline)["data"] == ""  # priming
    first = reply.stream.next_event(deadline)
    assert first is not None and '"progress":1' in first["data"], first
    return reply.stream, message, first["id"]


def test_resume_before_the_server_noticed_the_drop_gets_everything(live_server_mcp: Any) -> None:
    # The old connection stays open (the server cannot tell it is dead to the client): the
    # resumer must still get every later step and the answer, not wait forever for events the
    # server keeps writing to the old connection.
    session = LegacySession.start(live_server_mcp)
    old, message, first_id = start_streaming(live_server_mcp, session, steps=8, delay=0.15)
    try:
        resumed = resume(live_server_mcp, session, first_id)
        assert resumed.status == 200 and resumed.stream is not None
        messages = resumed.stream.read_to_end(timeout=WAIT)
        resumed.stream.close()
    finally:
        old.close()
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    assert progress == list(range(progress[0], 9)) and progress[0] >= 2, progress
    assert messages[-1]["id"] == message["id"] and messages[-1]["result"]["content"][0]["text"] == "done 8 steps"


def test_resume_at_the_final_event_ends_at_once(live_server_mcp: Any) -> None:
    session = LegacySession.start(live_server_mcp)
    reply = request(live_server_mcp, "POST", tool_call(session, "slow_steps", {"steps": 2, "delay": 0.01}, "p"),
                    session.headers())
    assert reply.stream is not None
    ids = []
    while (event := reply.stream.next_event(time.monotonic() + WAIT)) is not None:
        ids.append(event["id"])
    reply.stream.close()
    started = time.monotonic()
    resumed = resume(live_server_mcp, session, ids[-1])
    assert resumed.status == 200 and resumed.stream is not None
    assert resumed.stream.read_to_end(timeout=5) == []
    resumed.stream.close()
    assert time.monotonic() - started < 3


def test_resume_of_a_cancelled_request_ends_without_an_answer(live_server_mcp: Any) -> None:
    session = LegacySession.start(live_server_mcp)
    old, message, first_id = start_streaming(live_server_mcp, session, steps=100, delay=0.1)
    old.close()
    cancelled = request(live_server_mcp, "POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                  "params": {"requestId": message["id"]}}, session.headers())
    assert cancelled.status == 202
    time.sleep(0.3)
    resumed = resume(live_server_mcp, session, first_id)
    assert resumed.stream is not None
    messages = resumed.stream.read_to_end(timeout=5)
    resumed.stream.close()
    assert all("method" in m for m in messages), messages  # progress at most; a cancelled request has no answer


def test_a_resumed_stream_ends_with_its_session(live_server_mcp: Any) -> None:
    session = LegacySession.start(live_server_mcp)
    old, _, first_id = start_streaming(live_server_mcp, session, steps=200, delay=0.1)
    old.close()
    resumed = resume(live_server_mcp, session, first_id)
    assert resumed.stream is not None
    resumed.stream.next_event(time.monotonic() + WAIT)  # following live now
    deleted = request(live_server_mcp, "DELETE", headers=session.headers())
    assert deleted.status == 200
    resumed.stream.read_to_end(timeout=5)  # ends instead of hanging
    resumed.stream.close()


def test_resuming_a_request_whose_worker_died_gets_an_error_answer(own_server: LiveServer) -> None:
    session = LegacySession.start(own_server)
    old, message, first_id = start_streaming(own_server, session, steps=200, delay=0.1)
    old.close()
    own_server.kill(signal.SIGKILL)
    own_server.restart()  # the same database; the request that was running is gone with its process
    resumed = resume(own_server, session, first_id)
    assert resumed.status == 200 and resumed.stream is not None
    messages = resumed.stream.read_to_end(timeout=WAIT)
    resumed.stream.close()
    answer = messages[-1]
    assert answer["id"] == message["id"] and answer["error"]["code"] == -32603, messages
    assert "interrupted" in answer["error"]["message"]
    # The error is stored as the stream's end: resuming again gets it again, at once.
    again = resume(own_server, session, first_id)
    assert again.stream is not None
    assert again.stream.read_to_end(timeout=5)[-1] == answer
    again.stream.close()


@pytest.mark.parametrize("value", ["１２.3", "abc." + "9" * 5000, "0123456789abcdef. 3", "01 23.4", "\u0663.1"])
def test_malformed_last_event_id_is_400_not_500(live_server_mcp: Any, value: str) -> None:
    session = LegacySession.start(live_server_mcp)
    # Sent as UTF-8 bytes: http.client would refuse to encode non-Latin-1 text itself.
    reply = request(live_server_mcp, "GET", headers={"Accept": "text/event-stream",
                                                     "Last-Event-ID": value.encode("utf-8"), **session.headers()})
    assert reply.status == 400, (value, reply.status)
    assert json.dumps(reply.body)
