"""
Issue 28 at CI size, on real servers: a thousand streams on one daphne worker (500 legacy GET
streams, 500 2026-07-28 ``subscriptions/listen`` streams) of two workers on PostgreSQL and Redis.
Two notifications published by a third process reach every stream exactly once and in order, and
Redis, read directly, shows the worker's one channel as the only member of the broadcast group.
Then the streams close at once and the worker leaves the group.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor

import pytest

from django_mcp.fanout import BROADCAST_GROUP
from tests.transports.sse_client import LegacySession, SSEStream, request
from tests.transports.workers import Workers, own_redis_prefix, publish_from_third_process, two_workers


MODERN = "2026-07-28"
LEGACY_STREAMS = LISTEN_STREAMS = 500
OPENERS = 16


@pytest.fixture(scope="module")
def own_layer(services: Mapping[str, str]) -> Mapping[str, str]:
    return own_redis_prefix(services, "shared")


@pytest.fixture(scope="module")
def workers(own_layer: Mapping[str, str]) -> Iterator[Workers]:
    with two_workers(own_layer, keepalive="15", prefix="shared") as started:
        yield started


@pytest.fixture(scope="module")
def broadcast_members(own_layer: Mapping[str, str]) -> Iterator[Callable[[], int]]:
    """How many channels Redis holds in the broadcast group under this module's prefix."""
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, socket_timeout=5, socket_connect_timeout=5)
    key = f"{own_layer['MCP_TEST_REDIS_PREFIX']}:group:{BROADCAST_GROUP}"
    yield lambda: client.zcard(key)
    client.close()


def open_listen(server, index: int) -> SSEStream:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "shared-groups-test", "version": "1.0"}}
    message = {"jsonrpc": "2.0", "id": f"listen-{index}", "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": True, "promptsListChanged": True}, "_meta": meta}}
    reply = request(server, "POST", message, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"})
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
    assert reply.stream.next_message()["method"] == "notifications/subscriptions/acknowledged"
    return reply.stream


def open_get(server, index: int) -> SSEStream:
    return LegacySession.start(server).open_get_stream(server)


def test_a_thousand_streams_on_one_worker_hear_each_broadcast_once(
        workers: Workers, broadcast_members: Callable[[], int]) -> None:
    openers = [open_get] * LEGACY_STREAMS + [open_listen] * LISTEN_STREAMS
    started = time.monotonic()
    with ThreadPoolExecutor(OPENERS) as pool:
        streams = list(pool.map(lambda job: job[1](workers.a, job[0]), enumerate(openers)))
    print(f"{len(streams)} streams open on worker A in {time.monotonic() - started:.1f} s")
    try:
        # One member for the worker, not one per stream (issue 28).
        assert broadcast_members() == 1
        publish_from_third_process(workers.env, "from django_mcp.notifications import notify_list_changed",
                                   "notify_list_changed('tools')", "notify_list_changed('prompts')")
        heard = [[stream.next_message(timeout=30)["method"] for _ in range(2)] for stream in streams]
        expected = ["notifications/tools/list_changed", "notifications/prompts/list_changed"]
        wrong = [(index, methods) for index, methods in enumerate(heard) if methods != expected]
        assert not wrong, f"{len(wrong)} of {len(streams)} streams heard otherwise, e.g. {wrong[:3]}"
    finally:
        for stream in streams:
            stream.close()
    deadline = time.monotonic() + 30
    while broadcast_members() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert broadcast_members() == 0  # the worker left with its last listener
