"""
Fault 1: connections dropped mid-stream and resumed on the other worker.

A 2025-11-25 session POSTs a call whose answer streams (``slow_steps``: a progress notification
per step, then the result) to worker A; the client drops the connection after the first events
and resumes with ``GET`` + ``Last-Event-ID`` on worker B. What the protocol promises (MCP spec
2025-11-25, basic/transports#resumability-and-redelivery): the server replays the messages after
the last event id the client saw — each exactly once, in order, none from another stream — and
the stream SHOULD close once the response to the request has been sent (basic/transports
#sending-messages-to-the-server). Around that: the race where the client resumes before the
server noticed the drop, a resume with the final event's id, a resume of a cancelled request, and
a resume after the session was deleted.
"""

from __future__ import annotations

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
    next_event,
    progress_of,
    resume,
    tool_call,
    workers,
)
from tests.faults.ledger import FaultLedger
from tests.live import LiveServer
from tests.transports.sse_client import LegacySession, SSEStream, request

pytestmark = pytest.mark.fault_timeout(40)


@pytest.fixture(scope="module")
def pair(fault_services: Mapping[str, str]) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Workers A and B on one PostgreSQL database and one Redis channel layer."""
    with workers(fault_services, "resume-a", "resume-b") as (a, b):
        yield a, b


@pytest.fixture
def watch(pair: tuple[LiveServer, LiveServer]) -> Iterator[LogWatch]:
    """No unhandled exception on either worker during the test."""
    print(describe(*pair))
    watch = LogWatch(*pair)
    yield watch
    watch.check()


def start_call(server: LiveServer, session: LegacySession, steps: int, delay: float,
               token: str) -> tuple[dict, SSEStream, Event]:
    """POST ``slow_steps``; return the request, its open stream, and the priming event."""
    message = tool_call(session, "slow_steps", {"steps": steps, "delay": delay}, token)
    reply = request(server, "POST", message, session.headers())
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.raw[:300])
    priming = next_event(reply.stream)
    assert priming is not None and priming.message is None and priming.id, priming
    return message, reply.stream, priming


def read_after(stream: SSEStream, count: int) -> list[Event]:
    events = []
    for _ in range(count):
        event = next_event(stream)
        assert event is not None, "the stream ended early"
        events.append(event)
    return events


def assert_exact_rest(events: list[Event], ended: bool, *, stream: str, after: int, steps: int,
                      request_id: int) -> None:
    """
    What a resumer is owed after event ``after`` of one stream: events of that stream only, in
    order, none twice, the final answer last, then the end. The event store keeps only the latest
    progress notification of a stream (django_mcp/stores/events.py: only the latest progress
    matters to a client catching up), so a replay may skip superseded progress values — but the
    ones it sends ascend, and the last one reports the last step.
    """
    assert ended, f"the resumed stream did not end after the final answer: {events}"
    ids = [e.id for e in events]
    assert all(i is not None and i.rpartition(".")[0] == stream for i in ids), ids
    seqs = [e.seq for e in events]
    assert seqs == sorted(set(seqs)) and seqs[0] > after, f"not in order, or repeated: {ids}"
    progress = progress_of(events)
    assert progress == sorted(set(progress)) and all(value > after for value in progress), progress
    assert progress[-1:] == [steps] or after >= steps, f"the last step's progress is missing: {progress}"
    final = events[-1].message
    assert final is not None and final.get("id") == request_id, final
    assert final["result"]["content"][0]["text"] == f"done {steps} steps"


@pytest.mark.parametrize("seen", [0, 1, 3], ids=["after-priming", "after-first", "after-third"])
def test_drop_then_resume_on_the_other_worker(pair: tuple[LiveServer, LiveServer], watch: LogWatch,
                                              faults: FaultLedger, seen: int) -> None:
    """Dropped (TCP reset) after ``seen`` events on A, resumed on B: the rest exactly once, then the end."""
    a, b = pair
    session = LegacySession.start(a)
    steps = 8
    message, stream, priming = start_call(a, session, steps, 0.15, "drop")
    seen_events = read_after(stream, seen)
    last = (seen_events[-1] if seen_events else priming)
    drop(stream)
    faults.inject("drop")
    time.sleep(0.3)  # the server notices the reset
    resumed = resume(b, session, last.id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    events, ended = collect(resumed.stream, steps * 0.15 + PROMPT)
    resumed.stream.close()
    stream_id = priming.id.rpartition(".")[0]
    assert_exact_rest(events, ended, stream=stream_id, after=last.seq, steps=steps, request_id=message["id"])


def test_resume_before_the_server_noticed_the_drop(pair: tuple[LiveServer, LiveServer], watch: LogWatch,
                                                   faults: FaultLedger) -> None:
    """
    The client gives up on A (its network stalled) and resumes on B while A's connection is still
    open in the server's eyes: A goes on writing into a socket nobody reads. The resumed stream
    must still carry every event after the id, once — not only those A published after it
    finally noticed the connection was gone.
    """
    a, b = pair
    session = LegacySession.start(a)
    steps = 14
    message, stream, priming = start_call(a, session, steps, 0.15, "race")
    (first,) = read_after(stream, 1)
    faults.inject("resume-before-drop-noticed")
    resumed = resume(b, session, first.id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    early, _ = collect(resumed.stream, 1.0)  # A still believes its client is there
    drop(stream)  # now A notices
    faults.inject("drop")
    rest, ended = collect(resumed.stream, steps * 0.15 + PROMPT)
    resumed.stream.close()
    stream_id = priming.id.rpartition(".")[0]
    assert_exact_rest(early + rest, ended, stream=stream_id, after=first.seq, steps=steps,
                      request_id=message["id"])


def test_resume_with_the_final_event_id_ends_at_once(pair: tuple[LiveServer, LiveServer], watch: LogWatch,
                                                     faults: FaultLedger) -> None:
    """Nothing follows the final answer: a resume naming it is an empty stream that ends at once."""
    a, b = pair
    session = LegacySession.start(a)
    message, stream, _ = start_call(a, session, 2, 0.01, "final")
    events, ended = collect(stream, PROMPT)
    stream.close()
    assert ended and events[-1].message is not None and events[-1].message.get("id") == message["id"], events
    faults.inject("resume-at-final")
    resumed = resume(b, session, events[-1].id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    replayed, ended = collect(resumed.stream, 3.0)
    resumed.stream.close()
    assert replayed == [], replayed
    assert ended, "a stream resumed after its final event stayed open"


def drop_then_cancel(pair: tuple[LiveServer, LiveServer], faults: FaultLedger, cancel_on: LiveServer,
                     token: str) -> tuple[LegacySession, dict, Event]:
    """A long call on A, dropped after its first progress, then cancelled through ``cancel_on``."""
    a, _ = pair
    session = LegacySession.start(a)
    message, stream, _ = start_call(a, session, 60, 0.1, token)
    (first,) = read_after(stream, 1)
    drop(stream)
    faults.inject("drop")
    time.sleep(0.3)  # the server notices the reset: the request now runs without a connection
    cancelled = request(cancel_on, "POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                            "params": {"requestId": message["id"], "reason": "fault test"}},
                        session.headers())
    assert cancelled.status == 202, (cancelled.status, cancelled.raw[:300])
    faults.inject("cancel")
    return session, message, first


def test_resume_a_cancelled_request(pair: tuple[LiveServer, LiveServer], watch: LogWatch,
                                    faults: FaultLedger) -> None:
    """
    Dropped, then cancelled on the worker running it (``notifications/cancelled``, MCP spec
    2025-11-25, basic/utilities/cancellation), then resumed on B: no response is owed, so the
    resumed stream ends — after at most the few progress notifications sent before the
    cancellation took effect.
    """
    a, b = pair
    session, message, first = drop_then_cancel(pair, faults, a, "cancelled")
    resumed = resume(b, session, first.id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    events, ended = collect(resumed.stream, 4.0)
    resumed.stream.close()
    assert not any(e.message and e.message.get("id") == message["id"] for e in events), events
    assert len(progress_of(events)) <= 6, "the request went on after its cancellation"
    assert ended, "the resumed stream of a cancelled request stayed open"


def test_cancellation_from_the_other_worker_reaches_a_dropped_request(
        pair: tuple[LiveServer, LiveServer], watch: LogWatch, faults: FaultLedger) -> None:
    """
    Disconnection is not cancellation, so the request goes on after the drop — but it must stay
    cancellable: ``notifications/cancelled`` POSTed to B stops the request running on A. The
    resumed stream shows whether it did (it would carry ~40 more progress notifications in 4 s).
    """
    _, b = pair
    session, message, first = drop_then_cancel(pair, faults, b, "cancelled-elsewhere")
    resumed = resume(b, session, first.id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    events, _ = collect(resumed.stream, 4.0)
    resumed.stream.close()
    assert not any(e.message and e.message.get("id") == message["id"] for e in events), events
    assert len(progress_of(events)) <= 6, f"the request went on after its cancellation: {progress_of(events)}"


def test_resume_after_the_session_was_deleted_is_404(pair: tuple[LiveServer, LiveServer], watch: LogWatch,
                                                     faults: FaultLedger) -> None:
    """
    DELETE ends the session (MCP spec 2025-11-25, basic/transports#session-management): a resume
    naming it afterwards gets 404, on either worker, not a stream of a session that is gone.
    """
    a, b = pair
    session = LegacySession.start(a)
    _, stream, _ = start_call(a, session, 40, 0.1, "deleted")
    (first,) = read_after(stream, 1)
    drop(stream)
    faults.inject("drop")
    deleted = request(b, "DELETE", headers=session.headers())
    assert 200 <= deleted.status < 300, (deleted.status, deleted.raw[:300])
    faults.inject("session-deleted")
    # The other worker hears of the DELETE over the channel layer (transports/session_cache.py), so
    # a resume racing that announcement may be refused as 400 (its events went with the session)
    # before the 404; what must never happen is a stream, or anything but 404 once it is heard.
    for server in (a, b):
        seen = []
        deadline = time.monotonic() + PROMPT
        while not seen or (seen[-1] != 404 and time.monotonic() < deadline):
            resumed = resume(server, session, first.id)
            if resumed.stream is not None:
                resumed.stream.close()
            seen.append(resumed.status)
            time.sleep(0.05)
        assert seen[-1] == 404 and set(seen) <= {400, 404}, (server.name, seen)


def test_resumed_stream_ends_when_the_session_is_deleted(pair: tuple[LiveServer, LiveServer], watch: LogWatch,
                                                         faults: FaultLedger) -> None:
    """A stream resumed on B, then the session DELETEd on A: the stream ends in bounded time."""
    a, b = pair
    session = LegacySession.start(a)
    message, stream, _ = start_call(a, session, 60, 0.1, "deleted-later")
    (first,) = read_after(stream, 1)
    drop(stream)
    faults.inject("drop")
    time.sleep(0.3)
    resumed = resume(b, session, first.id)
    assert resumed.status == 200 and resumed.stream is not None, (resumed.status, resumed.raw[:300])
    deleted = request(a, "DELETE", headers=session.headers())
    assert 200 <= deleted.status < 300, (deleted.status, deleted.raw[:300])
    faults.inject("session-deleted")
    events, ended = collect(resumed.stream, 4.0)
    resumed.stream.close()
    assert not any(e.message and e.message.get("id") == message["id"] and "result" in e.message for e in events)
    assert ended, "the resumed stream of a deleted session stayed open"
