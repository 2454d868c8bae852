"""
Fault 5: clients that give up at every point of a request — before the body is complete, right
after sending it, after the first SSE event, while the server waits for the client's answer to
its own request (elicitation, sampling), and with ``notifications/cancelled`` inside a 2025-03-26
batch. After each, the worker serves new requests and its in-flight bookkeeping is clean: no
request left running that nobody will read or cancel, no server→client request left waiting,
no task left behind (``inflight_probe`` of ``tests/faults/mcp.py`` reads that bookkeeping).

The rules differ by era. 2025-11-25: disconnection SHOULD NOT be taken as cancellation (MCP spec
2025-11-25, basic/transports#sending-messages-to-the-server), so a legacy request runs on after a
drop and ends by itself; ``notifications/cancelled`` is how a client cancels (basic/utilities
/cancellation). 2026-07-28: closing the response stream cancels the request (MCP spec
2026-07-28, basic/transports/streamable-http), so its work stops with the connection.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.faults import wire
from tests.faults.harness import (
    KEEPALIVE,
    MODERN,
    PROMPT,
    Event,
    LogWatch,
    collect,
    describe,
    drop,
    echo_ok,
    next_event,
    probe,
    resume,
    settled,
    tool_call,
    workers,
)
from tests.faults.ledger import FaultLedger
from tests.live import LiveServer
from tests.transports.sse_client import JSON, POST_HEADERS, LegacySession, request

pytestmark = pytest.mark.fault_timeout(40)


@pytest.fixture(scope="module")
def pair(fault_services: Mapping[str, str]) -> Iterator[tuple[LiveServer, LiveServer]]:
    with workers(fault_services, "cancel-a", "cancel-b") as (a, b):
        for server in (a, b):
            # A worker starts some long-lived tasks on first use (the session cache's listener,
            # the reader of the worker's one channel-layer channel, which a stream's first group
            # join opens): start them now, so that they are part of every test's baseline.
            session = LegacySession.start(server)
            session.call(server, "ping")
            session.open_get_stream(server).close()
            echo_ok(server)
        yield a, b


@pytest.fixture
def worker(pair: tuple[LiveServer, LiveServer]) -> Iterator[LiveServer]:
    """Worker A, watched for unhandled exceptions; B only answers where a test says so."""
    print(describe(*pair))
    watch = LogWatch(*pair)
    yield pair[0]
    watch.check()


def clean(server: LiveServer, session_id: str, tasks_before: int) -> None:
    """Nothing of the session in flight or waiting, no extra task, and a new request served."""
    reading = settled(server, session_id, in_flight=0, pending_client_requests=0)
    assert reading["in_flight"] == 0 and reading["pending_client_requests"] == 0, reading
    deadline = time.monotonic() + PROMPT
    while (now := probe(server))["tasks"] > tasks_before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert now["tasks"] <= tasks_before, f"{now['tasks'] - tasks_before} task(s) left behind: {now['task_names']}"
    echo_ok(server)


def slow_call(era: str, server: LiveServer, steps: int) -> tuple[dict[str, Any], dict[str, str], str]:
    """A ``slow_steps`` call with progress: stateless 2026-07-28, or in a new 2025-11-25 session."""
    arguments = {"steps": steps, "delay": 0.1}
    if era == MODERN:
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "progressToken": "p",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "faults-cancel", "version": "1.0"}}
        message = {"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
                   "params": {"name": "slow_steps", "arguments": arguments, "_meta": meta}}
        return message, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "slow_steps"}, ""
    session = LegacySession.start(server)
    return tool_call(session, "slow_steps", arguments, "p"), session.headers(), session.id


@pytest.mark.parametrize("era", [MODERN, "2025-11-25"])
def test_disconnect_before_the_body_is_complete(worker: LiveServer, faults: FaultLedger, era: str) -> None:
    """``Content-Length`` promises more than arrives, then the connection is reset: nothing runs."""
    message, headers, session_id = slow_call(era, worker, 5)
    tasks_before = probe(worker)["tasks"]
    sock = wire.post_partial(worker, message, headers, sent=40)
    time.sleep(0.2)  # the worker has started reading the body
    wire.reset(sock)
    faults.inject("disconnect-mid-body")
    clean(worker, session_id, tasks_before)


@pytest.mark.parametrize("point", ["after-body", "after-first-event"])
@pytest.mark.parametrize("era", [MODERN, "2025-11-25"])
def test_disconnect_while_the_request_runs(worker: LiveServer, faults: FaultLedger, era: str, point: str) -> None:
    """
    Reset right after the body is sent, or after the first progress notification. 2026-07-28:
    the request stops with its stream (its 30 steps would take 3 s; the bookkeeping is clean in
    well under that). 2025-11-25: the request runs to its end (8 steps), then nothing remains.
    """
    steps = 30 if era == MODERN else 8
    message, headers, session_id = slow_call(era, worker, steps)
    tasks_before = probe(worker)["tasks"]
    if point == "after-body":
        sock = wire.post(worker, message, headers)
    else:
        sock = wire.post(worker, message, headers)
        assert b"notifications/progress" in wire.read_some(sock, b"notifications/progress")
    started = time.monotonic()
    wire.reset(sock)
    faults.inject(f"disconnect-{point}")
    clean(worker, session_id, tasks_before)
    if era == MODERN:
        assert time.monotonic() - started < 2.5, "the 2026-07-28 request ran on after its stream closed"


def ask_and_drop(server: LiveServer, tool: str, arguments: dict[str, Any]
                 ) -> tuple[LegacySession, dict[str, Any], Event]:
    """A legacy call that asks the client something; the connection drops once the question is read."""
    session = LegacySession.start(server, client_capabilities={"elicitation": {}, "sampling": {}})
    call = tool_call(session, tool, arguments)
    reply = request(server, "POST", call, session.headers())
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.raw[:300])
    while (event := next_event(reply.stream)) is not None and (event.message is None or "method" not in event.message):
        pass
    assert event is not None and event.message["method"] in ("elicitation/create", "sampling/createMessage"), event
    drop(reply.stream)
    # The worker notices a reset on its next write: daphne does not read from a connection whose
    # request it is serving. Nothing is written while the question waits, except the keep-alive
    # comment, so wait past one; before that a message might still reach the request by luck.
    time.sleep(float(KEEPALIVE) + 0.5)
    return session, call, event



def test_drop_while_the_server_waits_for_an_elicitation_then_cancel(worker: LiveServer, faults: FaultLedger) -> None:
    """
    The connection drops while ``elicitation/create`` waits for the user; the request waits on
    (the client may resume and answer). ``notifications/cancelled`` then ends it: the server
    request stops waiting and nothing of the session remains. (POSTed to the *other* worker, the
    cancellation reaches the request only while its worker has not yet noticed the drop — see
    test_resume.py's test_cancellation_from_the_other_worker_reaches_a_dropped_request, whose
    request writes often enough for the worker to notice at once.)
    """
    tasks_before = probe(worker)["tasks"]
    session, call, _ = ask_and_drop(worker, "ask_name", {})
    faults.inject("disconnect-during-elicitation")
    assert settled(worker, session.id, in_flight=1, pending_client_requests=1)["pending_client_requests"] == 1
    cancelled = request(worker, "POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                         "params": {"requestId": call["id"], "reason": "user left"}},
                        session.headers())
    assert cancelled.status == 202, (cancelled.status, cancelled.raw[:200])
    faults.inject("cancel")
    clean(worker, session.id, tasks_before)


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "fault-model",
           "stopReason": "endTurn"}


def test_drop_while_the_server_waits_for_sampling_then_resume_and_answer(
        pair: tuple[LiveServer, LiveServer], worker: LiveServer, faults: FaultLedger) -> None:
    """
    The connection drops while ``sampling/createMessage`` waits; the client resumes the stream on
    the other worker (MCP spec 2025-11-25, basic/transports#resumability-and-redelivery) and POSTs
    its answer to the worker running the request. The tool's result then arrives on the resumed
    stream, which ends, and nothing of the session remains.
    """
    other = pair[1]
    tasks_before = probe(worker)["tasks"]
    session, call, asked = ask_and_drop(worker, "test_sampling", {"prompt": "Capital of France?"})
    faults.inject("disconnect-during-sampling")
    resumed = resume(other, session, asked.id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    try:
        answered = request(worker, "POST", {"jsonrpc": "2.0", "id": asked.message["id"], "result": SAMPLED},
                           session.headers())
        assert answered.status == 202, (answered.status, answered.raw[:200])
        events, ended = collect(resumed.stream, PROMPT)
    finally:
        resumed.stream.close()
    finals = [e.message for e in events if e.message and e.message.get("id") == call["id"]]
    assert len(finals) == 1 and finals[0]["result"]["content"][0]["text"] == "LLM response: Paris", events
    assert ended
    clean(worker, session.id, tasks_before)


def post_batch(server: LiveServer, batch: list[dict[str, Any]], headers: dict[str, str],
               timeout: float) -> tuple[int, Any]:
    """POST a batch and read its whole answer, giving up after ``timeout`` seconds."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        connection.request("POST", "/mcp", body=json.dumps(batch).encode(), headers={**POST_HEADERS, **headers})
        response = connection.getresponse()
        body = response.read()
        return response.status, json.loads(body) if response.getheader("content-type", "").startswith(JSON) else body
    finally:
        connection.close()


@pytest.mark.parametrize("cancelled_from", ["inside-the-batch", "a-separate-post"])
def test_cancelling_one_request_of_a_batch(worker: LiveServer, faults: FaultLedger, cancelled_from: str) -> None:
    """
    A 2025-03-26 batch (MCP spec 2025-03-26, basic#batching) of a long call and two echoes; the
    long call is cancelled by a ``notifications/cancelled`` in the batch itself, or POSTed
    separately while the batch runs. Only the cancelled entry may go unanswered: the batch's
    response carries both echoes, in bounded time.
    """
    session = LegacySession.start(worker, version="2025-03-26")
    tasks_before = probe(worker)["tasks"]
    slow = tool_call(session, "slow_steps", {"steps": 40, "delay": 0.1})
    echoes = [tool_call(session, "echo", {"text": f"echo {n}"}) for n in (1, 2)]
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": slow["id"]}}
    batch = [slow, *echoes] + ([cancel] if cancelled_from == "inside-the-batch" else [])
    if cancelled_from == "a-separate-post":
        sock = wire.post(worker, batch, session.headers())
        time.sleep(0.3)
        assert request(worker, "POST", cancel, session.headers()).status == 202
        faults.inject("cancel-in-batch")
        sock.settimeout(PROMPT)
        try:
            raw = wire.read_some(sock, b"]")
        finally:
            wire.reset(sock)
        status, body = int(raw.split(b" ")[1]), json.loads(raw.partition(b"\r\n\r\n")[2] or b"null")
    else:
        faults.inject("cancel-in-batch")
        status, body = post_batch(worker, batch, session.headers(), PROMPT)
    assert status == 200, (status, body)
    assert isinstance(body, list) and {answer["id"] for answer in body} == {echoes[0]["id"], echoes[1]["id"]}, body
    clean(worker, session.id, tasks_before)
