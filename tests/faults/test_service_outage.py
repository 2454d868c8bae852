"""
Fault 3: PostgreSQL or Redis unavailable for a while, then restored — without touching the
system services. Both workers of this module reach the services through the relays of
``tests/faults/proxy.py``; ``refuse()`` makes a service unreachable for them (new connections
refused, open ones reset), ``cut()`` resets the open connections only (a blip), ``restore()``
brings it back.

What must hold: during the outage every request is answered in bounded time; what needs no
database (2026-07-28 requests, sessions a worker holds in its cache) or no channel layer goes on
working; what cannot be served gets a deliberate error — a JSON-RPC error body, with 503 — never
an unhandled exception answered by daphne's HTML 500; no stream hangs; and after the restore
everything works again without restarting a worker.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.faults.harness import PROMPT, LogWatch, collect, describe, echo_ok, fault_env, tool_call, workers
from tests.faults.ledger import FaultLedger
from tests.faults.proxy import TcpProxy
from tests.live import LiveServer
from tests.transports.sse_client import SSE, LegacySession, Reply, request, send

pytestmark = pytest.mark.fault_timeout(60)

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "faults-outage", "version": "1.0"}}}


class Cluster:
    """Two workers whose PostgreSQL and Redis connections go through relays this module controls."""

    def __init__(self, a: LiveServer, b: LiveServer, postgres: TcpProxy, redis: TcpProxy) -> None:
        self.a, self.b, self.postgres, self.redis = a, b, postgres, redis

    def restore(self) -> None:
        self.postgres.restore()
        self.redis.restore()


@pytest.fixture(scope="module")
def cluster(services: Mapping[str, str]) -> Iterator[Cluster]:
    with TcpProxy(("127.0.0.1", 5432), name="postgres") as postgres, \
            TcpProxy(("127.0.0.1", 6379), name="redis") as redis:
        env = fault_env(services, MCP_FAULTS_PG_PORT=str(postgres.port), MCP_FAULTS_REDIS_PORT=str(redis.port))
        with workers(env, "outage-a", "outage-b") as (a, b):
            yield Cluster(a, b, postgres, redis)


@pytest.fixture
def outage(cluster: Cluster) -> Iterator[Cluster]:
    """The cluster, its services back (and given a moment to be reconnected to) after the test."""
    print(describe(cluster.a, cluster.b))
    yield cluster
    cluster.restore()
    recover(cluster)


def recover(cluster: Cluster) -> None:
    """
    Make both workers usable for the next test: a database connection a fault broke fails the
    first query made on it (see test_everything_works_again_after_postgres_is_back), so call
    until each worker has answered an ``initialize`` and a session read cleanly twice in a row.
    """
    for server in (cluster.a, cluster.b):
        clean, deadline = 0, time.monotonic() + 3 * PROMPT
        while clean < 2:
            assert time.monotonic() < deadline, f"{server.name} did not recover after the fault"
            reply = request(server, "POST", INITIALIZE)
            clean = clean + 1 if reply.status == 200 else 0
            if reply.status == 200:
                session = reply.headers["mcp-session-id"]
                ping = request(server, "POST", {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                               {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
                clean = clean if ping.status == 200 else 0
            time.sleep(0.1)


def answered(reply: Reply, seconds: float = PROMPT) -> tuple[int, str, Any]:
    """Status, media type and body (an SSE answer read to its end, in bounded time)."""
    if reply.stream is None:
        return reply.status, reply.content_type, reply.body if reply.body is not None else reply.raw[:200]
    try:
        messages, ended = collect(reply.stream, seconds)
    finally:
        reply.stream.close()
    return reply.status, reply.content_type, ([e.message for e in messages], ended)


def deliberate(status: int, media_type: str, body: Any) -> bool:
    """A refusal the server meant: 503 with a JSON-RPC error (not daphne's HTML page for an exception)."""
    return status == 503 and media_type == "application/json" and isinstance(body, dict) and "error" in body


def cached_session(cluster: Cluster) -> LegacySession:
    """A session both workers have read (so their session caches hold it)."""
    session = LegacySession.start(cluster.a, initialized_on=cluster.b)
    for server in (cluster.a, cluster.b):
        assert "result" in session.call(server, "tools/call", {"name": "echo", "arguments": {"text": "warm"}})
    return session


def open_stream(server: LiveServer, session: LegacySession) -> Reply:
    return request(server, "GET", headers={"Accept": SSE, **session.headers()})


# --- PostgreSQL ----------------------------------------------------------------------------------


def test_what_needs_no_database_is_served_during_a_postgres_outage(outage: Cluster, faults: FaultLedger) -> None:
    """
    PostgreSQL down: 2026-07-28 requests (stateless) and the calls of a session the worker has
    cached are served; a streaming call of a 2025-11-25 session completes (its events cannot be
    stored for resumption, which the store logs) — nothing waits on the database.
    """
    session = cached_session(outage)
    watch = LogWatch(outage.a, outage.b)
    outage.postgres.refuse()
    faults.inject("postgres-outage")
    for server in (outage.a, outage.b):
        echo_ok(server, "stateless, no database")
        echoed = session.call(server, "tools/call", {"name": "echo", "arguments": {"text": "cached"}})
        assert echoed["result"]["content"][0]["text"] == "cached", echoed
    streamed = request(outage.a, "POST", tool_call(session, "slow_steps", {"steps": 3, "delay": 0.05}, "p"),
                       session.headers())
    status, _, (messages, ended) = answered(streamed)
    assert status == 200 and ended and messages[-1]["result"]["content"][0]["text"] == "done 3 steps", messages
    watch.check()


def test_what_needs_the_database_gets_a_clear_error_during_a_postgres_outage(outage: Cluster,
                                                                            faults: FaultLedger) -> None:
    """
    PostgreSQL down: a session the worker never read and a new HTTP+SSE stream cannot be served;
    each is refused at once with a deliberate 503 and a JSON-RPC error, and nothing escapes as an
    unhandled exception. A new Streamable HTTP session needs no database: its signed id carries
    it, and its row is written once the database is back.
    """
    uncached = LegacySession.start(outage.b)
    watch = LogWatch(outage.a, outage.b)
    outage.postgres.refuse()
    faults.inject("postgres-outage")
    started = time.monotonic()
    opened = request(outage.a, "POST", INITIALIZE)
    results = {
        "uncached session": answered(request(outage.a, "POST", uncached.message("tools/list"), uncached.headers())),
        "GET /sse": answered(send(outage.a, "GET", "/sse", headers={"Accept": SSE})),
    }
    status, media_type, body = answered(opened)
    assert time.monotonic() - started < 3 * PROMPT, "requests waited on the database"
    assert (status, media_type) == (200, "application/json") and "result" in body, (status, body)
    assert opened.headers.get("mcp-session-id"), opened.headers
    refused = {name: result[:2] for name, result in results.items() if not deliberate(*result)}
    assert refused == {}, f"not a deliberate 503 + JSON-RPC error: {refused}"
    watch.check()


@pytest.mark.parametrize("fault", ["outage", "blip"])
def test_everything_works_again_after_postgres_is_back(outage: Cluster, faults: FaultLedger, fault: str) -> None:
    """
    After an outage (refused for 2 s) or a blip (open connections reset, service still up), every
    request is served again at once, on both workers, without a restart: new sessions, a cached
    session's database writes (``logging/setLevel``), HTTP+SSE streams. Workers keep database
    connections between requests (``CONN_MAX_AGE``), so this is also about what they do with a
    connection the outage broke.
    """
    session = cached_session(outage)
    if fault == "outage":
        outage.postgres.refuse()
        faults.inject("postgres-outage")
        time.sleep(2.0)
        outage.postgres.restore()
    else:
        outage.postgres.cut()
        faults.inject("postgres-cut")
    failures = []
    for server in (outage.b, outage.a):
        replies = {"initialize": request(server, "POST", INITIALIZE),
                   "setLevel": request(server, "POST", session.message("logging/setLevel", {"level": "info"}),
                                       session.headers()),
                   "GET /sse": send(server, "GET", "/sse", headers={"Accept": SSE})}
        for name, reply in replies.items():
            status, media_type, _ = answered(reply, 0.5)
            if status != 200:
                failures.append((server.name, name, status, media_type))
    assert failures == [], f"not served again after PostgreSQL came back: {failures}"


# --- Redis ---------------------------------------------------------------------------------------------


def test_what_needs_no_channel_layer_is_served_during_a_redis_outage(outage: Cluster, faults: FaultLedger) -> None:
    """
    Redis down: sessions are made and served (state is in PostgreSQL); a tool that announces a
    change reports its failure as a tool error (MCP spec 2025-11-25, server/tools#error-handling)
    rather than failing the request.
    """
    session = cached_session(outage)
    watch = LogWatch(outage.a, outage.b)
    outage.redis.refuse()
    faults.inject("redis-outage")
    fresh = LegacySession.start(outage.a, initialized_on=outage.b)
    for server in (outage.a, outage.b):
        listed = fresh.call(server, "tools/list")
        assert "echo" in {tool["name"] for tool in listed["result"]["tools"]}, listed
        echo_ok(server, "stateless, no channel layer")
    changed = session.call(outage.a, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
    assert "result" in changed, changed
    watch.check()


def test_a_streaming_call_is_served_during_a_redis_outage(outage: Cluster, faults: FaultLedger) -> None:
    """
    Redis down: a 2025-11-25 call with progress streams on its own response, which its client is
    reading — nothing about that needs the channel layer; only a later resume would (and may fail).
    """
    session = cached_session(outage)
    watch = LogWatch(outage.a, outage.b)
    outage.redis.refuse()
    faults.inject("redis-outage")
    streamed = request(outage.b, "POST", tool_call(session, "slow_steps", {"steps": 3, "delay": 0.02}, "p"),
                       session.headers())
    status, media_type, body = answered(streamed)
    assert status == 200 and media_type == "text/event-stream", (status, media_type, body)
    messages, ended = body
    assert ended and messages[-1]["result"]["content"][0]["text"] == "done 3 steps", messages
    watch.check()


def test_streams_opened_during_a_redis_outage_get_a_clear_error(outage: Cluster, faults: FaultLedger) -> None:
    """A stream needs the channel layer to carry anything: without it, a deliberate 503, at once."""
    session = cached_session(outage)
    watch = LogWatch(outage.a, outage.b)
    outage.redis.refuse()
    faults.inject("redis-outage")
    results = {"GET /mcp": answered(open_stream(outage.a, session), 1.0),
               "GET /sse": answered(send(outage.b, "GET", "/sse", headers={"Accept": SSE}), 1.0)}
    refused = {name: result[:2] for name, result in results.items() if not deliberate(*result)}
    assert refused == {}, f"not a deliberate 503 + JSON-RPC error: {refused}"
    watch.check()


@pytest.mark.parametrize("fault", ["outage", "blip"])
def test_a_get_stream_lives_through_a_redis_fault_or_ends(outage: Cluster, faults: FaultLedger, fault: str) -> None:
    """
    A GET stream open on A while Redis goes away (or its connections are reset) and comes back:
    it must not go deaf. Either it delivers a list-changed notification triggered on B after the
    restore, or it has ended so the client reopens it (MCP spec 2025-11-25,
    basic/transports#listening-for-messages-from-the-server) — staying open and silent is a hang.
    """
    session = cached_session(outage)
    stream = session.open_get_stream(outage.a)
    try:
        if fault == "outage":
            outage.redis.refuse()
            faults.inject("redis-outage")
            time.sleep(2.0)
            outage.redis.restore()
        else:
            outage.redis.cut()
            faults.inject("redis-cut")
        time.sleep(1.5)  # whatever reconnects, reconnects
        changed = session.call(outage.b, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
        assert changed["result"]["isError"] is False, changed
        events, ended = collect(stream, 3.0)
    finally:
        stream.close()
    delivered = [e.message["method"] for e in events if e.message]
    assert ended or "notifications/tools/list_changed" in delivered, "the stream stayed open and deaf"


def test_sessions_and_streams_work_after_redis_is_back(outage: Cluster, faults: FaultLedger) -> None:
    """
    After a Redis outage, without restarting a worker: a GET stream opened afterwards gets
    notifications triggered on the other worker, and a DELETE on B is heard by A's session cache
    (a request on A then gets 404, MCP spec 2025-11-25, basic/transports#session-management).
    """
    session = cached_session(outage)
    outage.redis.refuse()
    faults.inject("redis-outage")
    time.sleep(2.0)
    outage.redis.restore()
    time.sleep(1.5)  # the session cache's listener retries every second
    watch = LogWatch(outage.a, outage.b)
    stream = session.open_get_stream(outage.a)
    try:
        changed = session.call(outage.b, "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
        assert changed["result"]["isError"] is False, changed
        assert stream.next_message(PROMPT)["method"] == "notifications/tools/list_changed"
    finally:
        stream.close()
    deleted = request(outage.b, "DELETE", headers=session.headers())
    assert deleted.status == 200, (deleted.status, deleted.raw[:200])
    deadline = time.monotonic() + 2.0
    while (status := request(outage.a, "POST", session.message("ping"), session.headers()).status) != 404:
        assert status == 200 and time.monotonic() < deadline, f"A still serves the deleted session ({status})"
        time.sleep(0.1)
    watch.check()
    echo_ok(outage.a)
    echo_ok(outage.b)
