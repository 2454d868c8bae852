"""
Fault 2: a worker SIGKILLed mid-request (``LiveServer.kill()``: no cleanup, no goodbye).

Session state is in PostgreSQL and pushes cross the Redis channel layer, so nothing about a
session belongs to the worker that served it (MCP spec 2025-11-25, basic/transports#session-management
lets any server instance answer for a session): the survivor serves the killed worker's sessions,
and a GET stream reopened there carries later notifications. A client that was reading a stream
of the dead worker, and resumes it on the survivor with ``Last-Event-ID`` (basic/transports
#resumability-and-redelivery), must get the request's answer or a clean end in bounded time:
nobody is left to produce the final event, so waiting for it would be forever.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator, Mapping

import pytest

from tests.faults.harness import (
    PROMPT,
    Event,
    LogWatch,
    collect,
    describe,
    drop,
    echo_ok,
    modern,
    next_event,
    progress_of,
    resume,
    tool_call,
    workers,
)
from tests.faults.ledger import FaultLedger
from tests.live import LiveServer
from tests.transports.sse_client import LegacySession, SSEStream, request

pytestmark = pytest.mark.fault_timeout(50)


@pytest.fixture(scope="module")
def survivor(fault_services: Mapping[str, str]) -> Iterator[LiveServer]:
    """Worker B, which outlives every victim of this module."""
    with workers(fault_services, "kill-survivor") as (server,):
        yield server


@pytest.fixture
def victim(fault_services: Mapping[str, str], survivor: LiveServer) -> Iterator[LiveServer]:
    """Worker A, started for one test and killed by it."""
    with workers(fault_services, "kill-victim") as (server,):
        print(describe(server, survivor))
        yield server


@pytest.fixture
def watch(survivor: LiveServer) -> Iterator[LogWatch]:
    """No unhandled exception on the survivor (the victim's log ends mid-sentence, by design)."""
    watch = LogWatch(survivor)
    yield watch
    watch.check()


def kill(server: LiveServer, faults: FaultLedger) -> None:
    """SIGKILL the worker's process group and wait until it is gone."""
    server.kill()
    assert server.proc is not None
    server.proc.wait(timeout=10)
    faults.inject("kill")


def ends_in_time(stream: SSEStream, seconds: float = PROMPT) -> list[Event]:
    """What a stream of the dead worker still delivers before it ends; it must end in time."""
    try:
        events, ended = collect(stream, seconds)
    except (OSError, http.client.HTTPException):
        return []  # reset, or a chunked body cut short: ended all the same
    finally:
        stream.close()
    assert ended, "a stream of a killed worker stayed open"
    return events


def test_the_survivor_serves_the_sessions_of_a_killed_worker(victim: LiveServer, survivor: LiveServer,
                                                            watch: LogWatch, faults: FaultLedger) -> None:
    """
    A session made on A, with a GET stream and a call in flight there; A dies. Every stream of A
    ends at once for its client; the session works on B (listing, calling); a GET stream reopened
    on B carries a list-changed notification triggered afterwards; a 2026-07-28 request retried
    on B is answered.
    """
    session = LegacySession.start(victim)
    get_stream = session.open_get_stream(victim)
    call = tool_call(session, "slow_steps", {"steps": 50, "delay": 0.1}, "in-flight")
    posted = request(victim, "POST", call, session.headers())
    assert posted.status == 200 and posted.stream is not None, (posted.status, posted.raw[:300])
    assert next_event(posted.stream) is not None  # priming: the call is running on A
    stateless = modern(victim, "modern-in-flight", "tools/call", {"name": "slow_steps",
                                                                  "arguments": {"steps": 50, "delay": 0.1}},
                       progress="modern-in-flight")
    assert stateless.status == 200 and stateless.stream is not None, (stateless.status, stateless.raw[:300])

    kill(victim, faults)
    for stream in (get_stream, posted.stream, stateless.stream):
        ends_in_time(stream)

    listed = session.call(survivor, "tools/list")
    assert "slow_steps" in {tool["name"] for tool in listed["result"]["tools"]}, listed
    echoed = session.call(survivor, "tools/call", {"name": "echo", "arguments": {"text": "after the kill"}})
    assert echoed["result"]["content"][0]["text"] == "after the kill", echoed
    reopened = session.open_get_stream(survivor)
    try:
        changed = session.call(survivor, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
        assert changed["result"]["isError"] is False, changed
        notification = reopened.next_message(PROMPT)
        assert notification["method"] == "notifications/tools/list_changed", notification
    finally:
        reopened.close()
    echo_ok(survivor, "retried on the survivor")


@pytest.mark.parametrize("order", ["resume-after-kill", "resume-before-kill"])
def test_resuming_a_stream_whose_worker_died_ends_in_bounded_time(
        victim: LiveServer, survivor: LiveServer, watch: LogWatch, faults: FaultLedger, order: str) -> None:
    """
    A call on A streams progress; the client drops the connection and resumes on B — after A was
    killed, or before. Either way the replay is exact (every stored event after the id, once, in
    order), and then, since A will never send the final answer, B ends the stream — with an error
    response for the request, or with nothing — within the liveness window
    (``STREAM_LIVENESS_SECONDS``, 3 s on the fault workers) plus a margin.
    """
    session = LegacySession.start(victim)
    call = tool_call(session, "slow_steps", {"steps": 100, "delay": 0.1}, order)
    posted = request(victim, "POST", call, session.headers())
    assert posted.status == 200 and posted.stream is not None, (posted.status, posted.raw[:300])
    assert next_event(posted.stream) is not None
    seen = [next_event(posted.stream) for _ in range(2)]
    assert all(event is not None and event.id for event in seen), seen
    last = seen[-1]
    drop(posted.stream)
    faults.inject("drop")
    if order == "resume-after-kill":
        kill(victim, faults)
    resumed = resume(survivor, session, last.id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    if order == "resume-before-kill":
        time.sleep(0.5)  # some events reach B live before A dies
        kill(victim, faults)
    events, ended = collect(resumed.stream, 3.0 + PROMPT)
    resumed.stream.close()

    messages = [event for event in events if event.message is not None]
    progress = progress_of(messages)
    assert progress == list(range(last.seq + 1, last.seq + 1 + len(progress))), progress
    answers = [e.message for e in messages if e.message.get("id") == call["id"]]
    assert len(answers) <= 1 and all("error" in answer for answer in answers), answers
    assert ended, "the resumed stream of a dead worker's request stayed open"


def test_a_session_whose_worker_died_before_writing_its_row_lives_on(
        victim: LiveServer, survivor: LiveServer, fault_services: Mapping[str, str], watch: LogWatch,
        faults: FaultLedger) -> None:
    """
    A session opened on A, and A killed before the row it owed (written about a second later,
    stores/pending_rows.py) exists. Its signed id carries the session, so B serves it; B, meeting it
    older than ``RESCUE_AFTER`` and still without a row, writes the row itself, after which the
    session lives on rows as any other (its GET stream touches that row).
    """
    import psycopg

    from django_mcp.stores.pending_rows import RESCUE_AFTER

    session = LegacySession.start(victim)
    opened = time.monotonic()
    kill(victim, faults)
    key = session.id.partition(".")[0]
    dsn = f"host=127.0.0.1 port=5432 user=postgres dbname={fault_services['MCP_TEST_PG_NAME']}"

    def row_exists() -> bool:
        with psycopg.connect(dsn) as connection:
            return connection.execute("SELECT 1 FROM django_mcp_mcpsession WHERE id = %s AND NOT ended",
                                      [key]).fetchone() is not None

    assert not row_exists(), "the victim wrote the row before it was killed: the test needs it unwritten"
    time.sleep(max(0.0, RESCUE_AFTER + 0.5 - (time.monotonic() - opened)))
    listed = session.call(survivor, "tools/list")
    assert "echo" in {tool["name"] for tool in listed["result"]["tools"]}, listed
    assert row_exists()
    stream = session.open_get_stream(survivor)
    stream.close()
