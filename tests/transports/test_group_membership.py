"""
Issue 11: channel-layer group membership after a mass disconnect, on ``channels_redis``.

Every open stream puts its channel in groups: the broadcast group (list-changed notifications),
its session's group, the group of each resource it watches (fanout.py). When the stream ends, the
channel must leave them all, or the group keeps a dead member. Every later ``group_send`` then
writes a message for it into Redis that nobody reads, until channels_redis's group expiry (a day)
drops it. When 100 streams on one worker closed at once, the ``group_discard`` calls used to fail
with "Too many connections": redis-py's connection pool holds 100. ``fanout.layer_call`` now
bounds how many layer operations a worker runs at once and retries a failure.

The test opens 160 streams of every kind on worker A of two daphne workers (PostgreSQL + Redis):

- 60 legacy Streamable HTTP GET streams (``initialize``, then GET with ``Mcp-Session-Id``; MCP spec
  2025-11-25, basic/transports#streamable-http), half of them subscribed to a resource;
- 60 2026-07-28 ``subscriptions/listen`` streams (MCP spec 2026-07-28, basic/patterns/subscriptions)
  with ``toolsListChanged`` and a resource subscription;
- 40 HTTP+SSE ``GET /sse`` streams, initialized (MCP spec 2024-11-05, basic/transports#http-with-sse),
  half subscribed to the resource.

The notification groups (broadcast, resources) hold one channel per worker however many of its
streams listen (issue 28, transports/shared_groups.py): with 160 streams open, worker A's one
channel is their only member; each legacy and HTTP+SSE session's group holds its stream's channel.
It aborts them all at once (TCP reset) and reads Redis directly. channels_redis keeps a group as
the sorted set ``<prefix>:group:<name>`` (``RedisChannelLayer._group_key``). Every stream group
must be empty again within a bound. The worker-wide session-cache group (``mcp.sessions``, one
channel per worker) is the only membership that may remain. Then a stream opened afterwards must
still get a notification published by a third process.

With ``layer_call`` reduced to a bare ``await operation(*args)`` (the code before it), this test
fails: 44 channels were left in 3 groups 30 s after the reset, with 267 failures in the worker's log.
With it, the groups were empty about 1.5 s after the reset.
"""

from __future__ import annotations

import socket
import struct
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from django_mcp.fanout import BROADCAST_GROUP, SESSIONS_GROUP, resource_group
from tests.live import LiveServer
from tests.transports.sse_client import LegacySession, SseSession, SSEStream, request
from tests.transports.workers import Workers, own_redis_prefix, publish_from_third_process, two_workers


MODERN = "2026-07-28"
RESOURCE = "memo://greeting"
LEGACY_STREAMS, LISTEN_STREAMS, SSE_STREAMS = 60, 60, 40
TOTAL = LEGACY_STREAMS + LISTEN_STREAMS + SSE_STREAMS
OPENERS = 8  # client threads opening streams side by side
JOINED_WITHIN = 30.0  # seconds for every stream's joins to show in Redis
EMPTY_WITHIN = 30.0  # seconds for every group to empty after the reset
#: Groups a worker itself belongs to for its whole life (transports/session_cache.py).
WORKER_GROUPS = {SESSIONS_GROUP}


@pytest.fixture(scope="module")
def own_layer(services: Mapping[str, str]) -> Mapping[str, str]:
    return own_redis_prefix(services, "groups")


@pytest.fixture(scope="module")
def workers(own_layer: Mapping[str, str]) -> Iterator[Workers]:
    """Two daphne processes on the same PostgreSQL database and Redis channel layer."""
    with two_workers(own_layer, keepalive="2", prefix="groups") as started:
        yield started


@pytest.fixture(scope="module")
def redis_groups(own_layer: Mapping[str, str]) -> Iterator[Callable[[], dict[str, int]]]:
    """``members()``: group name → number of channels, read from Redis for this run's prefix."""
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, socket_timeout=5, socket_connect_timeout=5)
    marker = f"{own_layer['MCP_TEST_REDIS_PREFIX']}:group:"

    def members() -> dict[str, int]:
        counts = {}
        for key in client.scan_iter(match=f"{marker}*", count=1000):
            counts[key.decode()[len(marker):]] = client.zcard(key)
        return {name: count for name, count in counts.items() if count}

    yield members
    client.close()


def modern_listen(server: LiveServer, listen_id: str, notifications: dict[str, Any]) -> SSEStream:
    """A ``subscriptions/listen`` stream, returned once its acknowledgement has arrived."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "group-membership-test", "version": "1.0"}}
    message = {"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen",
               "params": {"notifications": notifications, "_meta": meta}}
    reply = request(server, "POST", message, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"})
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
    ack = reply.stream.next_message()
    assert ack["method"] == "notifications/subscriptions/acknowledged", ack
    return reply.stream


def open_legacy(server: LiveServer, index: int) -> tuple[SSEStream, LegacySession]:
    session = LegacySession.start(server)
    if index % 2 == 0:
        assert session.call(server, "resources/subscribe", {"uri": RESOURCE})["result"] == {}
    return session.open_get_stream(server), session


def open_sse(server: LiveServer, index: int) -> tuple[SSEStream, None]:
    session = SseSession.open(server)
    session.initialize(server)
    if index % 2 == 0:
        assert "result" in session.call(server, "resources/subscribe", {"uri": RESOURCE})
    return session.stream, None


def open_listen(server: LiveServer, index: int) -> tuple[SSEStream, None]:
    stream = modern_listen(server, f"listen-{index}", {"toolsListChanged": True, "resourceSubscriptions": [RESOURCE]})
    return stream, None


def reset(stream: SSEStream) -> None:
    """Abort the connection: SO_LINGER 0 makes close() send a TCP reset, with no goodbye."""
    sock = stream.connection.sock
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    stream.response.close()  # drops the makefile reference, so the next close is the real one
    stream.connection.close()


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def stream_groups(members: dict[str, int]) -> dict[str, int]:
    return {name: count for name, count in members.items() if name not in WORKER_GROUPS}


def test_groups_empty_after_a_mass_disconnect(workers: Workers, redis_groups: Callable[[], dict[str, int]]) -> None:
    """
    160 streams of three kinds on worker A, reset at once: within 30 s no group holds a channel of
    theirs (Redis read directly), the workers logged no failed ``group_discard``, and a stream opened
    afterwards gets a list_changed and a resource update published by a third process.
    """
    a = workers.a
    print(workers.describe())
    assert stream_groups(redis_groups()) == {}, "groups of an earlier test are still populated"

    openers = [open_legacy] * LEGACY_STREAMS + [open_listen] * LISTEN_STREAMS + [open_sse] * SSE_STREAMS
    with ThreadPoolExecutor(OPENERS) as pool:
        opened = list(pool.map(lambda job: job[1](a, job[0]), enumerate(openers)))
    streams = [stream for stream, _ in opened]
    sessions = [session for _, session in opened if session is not None]

    broadcast, resource = BROADCAST_GROUP, resource_group(RESOURCE)

    def all_joined() -> bool:
        groups = redis_groups()
        sessions = sum(name.startswith("mcp.session.") for name in groups)
        return groups.get(broadcast) == 1 and groups.get(resource) == 1 and sessions == LEGACY_STREAMS + SSE_STREAMS

    joined = wait_for(all_joined, JOINED_WITHIN)
    before = redis_groups()
    # One channel per worker in the notification groups, whatever the number of its listeners.
    assert joined, (f"expected worker A alone in {broadcast} and {resource}, and "
                    f"{LEGACY_STREAMS + SSE_STREAMS} session groups: {before}")

    started = time.monotonic()
    for stream in streams:
        reset(stream)
    emptied = wait_for(lambda: not stream_groups(redis_groups()), EMPTY_WITHIN)
    seconds = time.monotonic() - started
    left = stream_groups(redis_groups())
    logs = a.log_path.read_text(errors="replace") if a.log_path else ""
    failures = logs.count("Could not leave channel group") + logs.count("Too many connections")
    assert emptied, (f"{sum(left.values())} channels still in {len(left)} groups {seconds:.1f} s after the reset "
                     f"(e.g. {dict(list(left.items())[:5])}); {failures} failures in worker A's log")
    assert failures == 0, f"worker A logged {failures} failed channel-layer operations; see {a.log_path}"
    # mcp.sessions holds one channel per worker process of this test run, including workers of
    # earlier modules that were stopped (daphne has no shutdown hook to leave it; channels_redis
    # expires such members): only the stream groups are this test's business.
    assert stream_groups(redis_groups()) == {}, redis_groups()
    print(f"{TOTAL} streams reset; groups empty after {seconds:.2f} s")

    for session in sessions:  # the legacy sessions outlive their streams: end them, as a client would
        request(a, "DELETE", headers=session.headers())

    # Delivery still works: a new stream on the same worker hears a change made elsewhere.
    stream = modern_listen(a, f"after-{uuid.uuid4().hex[:6]}",
                           {"toolsListChanged": True, "resourceSubscriptions": [RESOURCE]})
    try:
        publish_from_third_process(workers.env,
                                   "from django_mcp.notifications import notify_list_changed, notify_resource_updated",
                                   "notify_list_changed('tools')", f"notify_resource_updated({RESOURCE!r})")
        methods = {stream.next_message()["method"] for _ in range(2)}
        assert methods == {"notifications/tools/list_changed", "notifications/resources/updated"}, methods
    finally:
        stream.close()
    assert wait_for(lambda: not stream_groups(redis_groups()), EMPTY_WITHIN), redis_groups()

