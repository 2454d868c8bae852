"""
Channel-layer operations under load (``fanout.layer_call``): a burst of group changes on
channels_redis waits its turn instead of exhausting the connection pool, and a transient failure
is retried rather than leaving a dead channel in a group.
"""

import asyncio
import uuid
from collections.abc import Mapping

import pytest

from django_mcp import fanout


async def test_a_burst_of_group_changes_on_redis_all_land(services: Mapping[str, str]) -> None:
    from channels_redis.core import RedisChannelLayer

    # More concurrent operations than redis-py's default pool (100 connections) can serve at once.
    layer = RedisChannelLayer(hosts=[("127.0.0.1", 6379)], prefix=f"django_mcp_fanout_{uuid.uuid4().hex[:8]}")
    channels = [await layer.new_channel() for _ in range(300)]
    try:
        await asyncio.gather(*(fanout.layer_call(layer.group_add, "burst", channel) for channel in channels))
        connection = layer.connection(layer.consistent_hash(layer._group_key("burst")))
        assert await connection.zcard(layer._group_key("burst")) == 300
        await asyncio.gather(*(fanout.layer_call(layer.group_discard, "burst", channel) for channel in channels))
        assert await connection.zcard(layer._group_key("burst")) == 0
    finally:
        await layer.flush()
        await layer.close_pools()


async def test_a_failing_operation_is_retried_then_reported() -> None:
    calls = []

    async def flaky(value: int) -> int:
        calls.append(value)
        if len(calls) < fanout.LAYER_ATTEMPTS:
            raise ConnectionError("Too many connections")
        return value * 2

    assert await fanout.layer_call(flaky, 21) == 42 and len(calls) == fanout.LAYER_ATTEMPTS

    async def broken() -> None:
        calls.append("broken")
        raise ConnectionError("down")

    calls.clear()
    with pytest.raises(ConnectionError, match="down"):
        await fanout.layer_call(broken)
    assert len(calls) == fanout.LAYER_ATTEMPTS


async def test_at_most_the_limit_runs_at_once() -> None:
    running = peak = 0

    async def operation() -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1

    await asyncio.gather(*(fanout.layer_call(operation) for _ in range(fanout.LAYER_CONCURRENCY * 3)))
    assert peak == fanout.LAYER_CONCURRENCY


def test_only_an_empty_group_of_the_in_process_layer_is_skipped() -> None:
    from channels.layers import InMemoryChannelLayer
    from channels_redis.core import RedisChannelLayer

    layer = InMemoryChannelLayer()
    assert fanout.nobody_joined(layer, "mcp.session.abc")
    asyncio.run(layer.group_add("mcp.session.abc", "specific.x!y"))
    assert not fanout.nobody_joined(layer, "mcp.session.abc")
    # Another process's members are not known here: always send.
    assert not fanout.nobody_joined(RedisChannelLayer(), "mcp.session.abc")


async def test_a_publish_still_reaches_who_joined_the_in_process_layer(settings) -> None:
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.pop("default", None)
    layer = channel_layers["default"]
    channel = await layer.new_channel()
    await layer.group_add(fanout.session_group("k"), channel)
    await fanout.publish_to_session("k", {"type": "mcp.ping"})
    await fanout.publish_to_session("nobody", {"type": "mcp.ping"})  # no member: nothing to do
    assert await asyncio.wait_for(layer.receive(channel), 1) == {"type": "mcp.ping", "group": fanout.session_group("k")}
    channel_layers.backends.pop("default", None)
