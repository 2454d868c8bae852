"""
Fault 6: the 2024-11-05 HTTP+SSE transport (MCP spec 2024-11-05, basic/transports#http-with-sse)
under load and misuse, across two workers: the client holds ``GET /sse`` on worker A and POSTs
to ``/messages/`` on worker B, so every answer crosses the Redis channel layer to reach the
stream.

- A 2025-03-26 batch of 150 requests (MCP spec 2025-03-26, basic#batching, negotiated over this
  transport): 150 answers on the stream — more than a channel's capacity (100) in flight at once.
- A batch whose first request to finish must not take the others' state with it.
- Two requests in flight with the same id (a client bug: MCP spec 2025-03-26, basic#requests
  says an id MUST NOT be reused within a session): whatever the server makes of it, a
  cancellation of that id must not leave a request running that nobody can cancel.
- The stream closed while its requests run: closing it ends the session (2024-11-05), so its
  requests are cancelled on whichever worker runs them and later POSTs get 404.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.faults.harness import PROMPT, LogWatch, describe, drop, echo_ok, settled, workers
from tests.faults.ledger import FaultLedger
from tests.live import LiveServer
from tests.transports.sse_client import SseSession

pytestmark = pytest.mark.fault_timeout(45)


@pytest.fixture(scope="module")
def pair(fault_services: Mapping[str, str]) -> Iterator[tuple[LiveServer, LiveServer]]:
    with workers(fault_services, "sse-fault-a", "sse-fault-b") as (a, b):
        yield a, b


@pytest.fixture
def session(pair: tuple[LiveServer, LiveServer]) -> Iterator[SseSession]:
    """A 2025-03-26 session whose stream is on A, initialized through B; no unhandled exceptions."""
    a, b = pair
    print(describe(a, b))
    watch = LogWatch(a, b)
    opened = SseSession.open(a)
    try:
        assert opened.initialize(b, "2025-03-26", {"elicitation": {}})["protocolVersion"] == "2025-03-26"
        yield opened
    finally:
        opened.close()
    watch.check()


def call(session: SseSession, name: str, arguments: dict[str, Any], progress: str | None = None,
         request_id: Any = None) -> dict[str, Any]:
    message = session.message("tools/call", {"name": name, "arguments": arguments,
                                             **({"_meta": {"progressToken": progress}} if progress else {})})
    if request_id is not None:
        message["id"] = request_id
    return message


def read_for(session: SseSession, seconds: float, until: Any = None) -> list[dict[str, Any]]:
    """Messages arriving on the stream within ``seconds``, or until ``until(messages)`` holds."""
    messages, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline and not (until and until(messages)):
        event = session.stream.next_event(deadline + 2, idle=True)
        if event is None:
            break
        if event.get("data"):
            messages.append(json.loads(event["data"]))
    return messages


@pytest.mark.parametrize("posted_to", [
    # A and B run side by side: A drains its channel while B publishes (under heavy load it may
    # not, and this variant then shows the same loss as the next).
    "other-worker",
    # A publishes all 150 answers before its stream's reader gets a turn to drain the channel.
    "same-worker",
])
def test_a_batch_of_150_requests_gets_150_answers(pair: tuple[LiveServer, LiveServer], session: SseSession,
                                                  faults: FaultLedger, posted_to: str) -> None:
    """150 echoes in one batch POSTed to B (or to A): each answer, once and right, on A's stream."""
    batch = [call(session, "echo", {"text": f"n{n}"}) for n in range(150)]
    session.accepted(pair[1] if posted_to == "other-worker" else pair[0], batch)
    faults.inject("batch-150")
    wanted = {message["id"]: f"n{n}" for n, message in enumerate(batch)}
    messages = read_for(session, 2 * PROMPT, until=lambda got: len({m.get("id") for m in got} & set(wanted)) == 150)
    answers = {m["id"]: m["result"]["content"][0]["text"] for m in messages if m.get("id") in wanted}
    duplicates = len([m for m in messages if m.get("id") in wanted]) - len(answers)
    assert duplicates == 0, f"{duplicates} answers arrived twice"
    assert answers == wanted, f"{len(wanted) - len(answers)} of 150 answers missing"


def test_the_first_request_of_a_batch_to_finish_leaves_the_others_alone(
        pair: tuple[LiveServer, LiveServer], session: SseSession, faults: FaultLedger) -> None:
    """
    A batch on B of an elicitation and a short call. The short call finishes first, while the
    elicitation waits; its answer, POSTed to A, must still reach the request on B, whose greeting
    then arrives on the stream.
    """
    a, b = pair
    ask = call(session, "ask_name", {})
    short = call(session, "slow_steps", {"steps": 3, "delay": 0.1})
    session.accepted(b, [ask, short])
    faults.inject("batch-partial-finish")
    messages = read_for(session, PROMPT, until=lambda got: {m.get("id") for m in got} >= {short["id"]}
                        and any(m.get("method") == "elicitation/create" for m in got))
    question = next(m for m in messages if m.get("method") == "elicitation/create")
    session.accepted(a, {"jsonrpc": "2.0", "id": question["id"],
                         "result": {"action": "accept", "content": {"name": "Ada"}}})
    later = read_for(session, PROMPT, until=lambda got: any(m.get("id") == ask["id"] for m in got))
    greeting = [m for m in later if m.get("id") == ask["id"]]
    assert greeting and greeting[0]["result"]["content"][0]["text"] == "Hello, Ada!", later


def test_two_requests_in_flight_with_the_same_id(pair: tuple[LiveServer, LiveServer], session: SseSession,
                                                 faults: FaultLedger) -> None:
    """
    Two calls with id 7, both POSTed to B: a short one (0.5 s) and a long one (4 s). After the
    short one answered, ``notifications/cancelled`` for 7 is sent. Whether the server refused
    the duplicate or ran both, nothing with id 7 may still be running afterwards: the long call
    must not finish, and the session's bookkeeping on B is empty.
    """
    b = pair[1]
    first = call(session, "slow_steps", {"steps": 5, "delay": 0.1}, "first", request_id=7)
    second = call(session, "slow_steps", {"steps": 40, "delay": 0.1}, "second", request_id=7)
    session.accepted(b, first)
    session.accepted(b, second)
    faults.inject("duplicate-id")
    messages = read_for(session, PROMPT, until=lambda got: any(
        m.get("id") == 7 and "done 5 steps" in str(m.get("result")) for m in got))
    assert any(m.get("id") == 7 and "done 5 steps" in str(m.get("result")) for m in messages), messages
    session.accepted(b, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    faults.inject("cancel")
    later = read_for(session, 4.5)
    assert not any("done 40 steps" in str(m.get("result")) for m in later), "the long call ran on, uncancellable"
    reading = settled(b, session.session_id, in_flight=0)
    assert reading["in_flight"] == 0, reading


@pytest.mark.parametrize("requests_on", ["same-worker", "other-worker"])
def test_stream_closed_while_its_requests_run(pair: tuple[LiveServer, LiveServer], session: SseSession,
                                              faults: FaultLedger, requests_on: str) -> None:
    """
    Requests run on B, or on A with the stream (a long call with progress, an elicitation waiting
    for its answer); the client resets the stream on A. The session ends: its requests are
    cancelled (nothing in flight or waiting), POSTs naming it get 404 on both workers, and both
    workers serve new sessions.
    """
    a, b = pair
    runner = b if requests_on == "other-worker" else a
    long_call = call(session, "slow_steps", {"steps": 60, "delay": 0.1}, "long")
    session.accepted(runner, long_call)
    session.accepted(runner, call(session, "ask_name", {}))
    read_for(session, PROMPT, until=lambda got: any(m.get("method") == "elicitation/create" for m in got)
             and any(m.get("method") == "notifications/progress" for m in got))
    assert settled(runner, session.session_id, in_flight=2)["in_flight"] == 2
    drop(session.stream)
    faults.inject("sse-stream-closed")
    reading = settled(runner, session.session_id, in_flight=0, pending_client_requests=0)
    assert reading["in_flight"] == 0 and reading["pending_client_requests"] == 0, reading
    for server in (a, b):
        deadline = time.monotonic() + 2.0
        while (status := session.post(server, session.message("ping")).status) != 404:
            assert status == 202 and time.monotonic() < deadline, (server.name, status)
            time.sleep(0.1)
    for stream_on, post_to in ((a, b), (b, a)):
        fresh = SseSession.open(stream_on)
        try:
            fresh.initialize(post_to)
            answer = fresh.call(post_to, "tools/call", {"name": "echo", "arguments": {"text": "new session"}})
            assert answer["result"]["content"][0]["text"] == "new session", answer
        finally:
            fresh.close()
    echo_ok(runner)
