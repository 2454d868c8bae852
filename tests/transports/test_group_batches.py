"""
``transports.group_batches``: the group joins and leaves a worker asks for together reach
channels_redis in one pipeline, with the effect of the layer's own ``group_add`` /
``group_discard``; a pipeline that cannot be sent fails every join waiting on it, and observers
hear which operation failed. Any other layer keeps its own calls.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from django_mcp.signals import channel_layer_failed
from django_mcp.transports.group_batches import MAX_BATCH, GroupBatches, pipelines_groups


@pytest.fixture
async def redis_layer(services: Mapping[str, str]) -> AsyncIterator[Any]:
    from channels_redis.core import RedisChannelLayer

    layer = RedisChannelLayer(hosts=[("127.0.0.1", 6379)], prefix=f"django_mcp_batches_{uuid.uuid4().hex[:8]}")
    try:
        yield layer
    finally:
        await layer.flush()
        await layer.close_pools()


def count_pipelines(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each pipeline sent, as its number of commands; the real pipelines still run."""
    from redis.asyncio.client import Pipeline

    sent: list[int] = []
    real_execute = Pipeline.execute

    async def execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(len(self.command_stack))
        return await real_execute(self, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "execute", execute)
    return sent


async def test_joins_asked_together_go_in_one_pipeline_and_do_what_group_add_does(redis_layer, monkeypatch) -> None:
    batches = GroupBatches(redis_layer)
    assert batches.batched and pipelines_groups(redis_layer)
    sent = count_pipelines(monkeypatch)
    channel = await redis_layer.new_channel()
    groups = [f"mcp.session.{uuid.uuid4().hex}" for _ in range(300)]

    await asyncio.gather(*(batches.add(group, channel) for group in groups))

    assert sent == [600]  # a ZADD and an EXPIRE per group, one round trip for all
    for group in groups[:5]:
        key = redis_layer._group_key(group)
        connection = redis_layer.connection(redis_layer.consistent_hash(group))
        assert await connection.zrange(key, 0, -1) == [channel.encode()]
        assert 0 < await connection.ttl(key) <= redis_layer.group_expiry
    # What the layer delivers to the group reaches the channel, as after its own group_add.
    await redis_layer.group_send(groups[7], {"type": "mcp.test", "n": 7})
    assert (await asyncio.wait_for(redis_layer.receive(channel), 5))["n"] == 7

    sent.clear()  # group_send sends a pipeline of its own
    await asyncio.gather(*(batches.discard(group, channel) for group in groups))
    assert sent == [300]  # a ZREM each
    for group in groups[:5]:
        connection = redis_layer.connection(redis_layer.consistent_hash(group))
        assert await connection.zcard(redis_layer._group_key(group)) == 0


async def test_a_burst_larger_than_a_batch_goes_in_several_and_every_join_returns(redis_layer, monkeypatch) -> None:
    batches = GroupBatches(redis_layer)
    sent = count_pipelines(monkeypatch)
    channel = await redis_layer.new_channel()
    groups = [f"mcp.session.{uuid.uuid4().hex}" for _ in range(MAX_BATCH + 120)]

    await asyncio.gather(*(batches.add(group, channel) for group in groups))

    assert sent == [2 * MAX_BATCH, 2 * 120]
    check = redis_layer.connection(0).pipeline(transaction=False)
    for group in groups:
        check.zcard(redis_layer._group_key(group))
    assert set(await check.execute()) == {1}


async def test_a_join_asked_while_a_pipeline_is_out_goes_in_the_next(redis_layer, monkeypatch) -> None:
    batches = GroupBatches(redis_layer)
    sent = count_pipelines(monkeypatch)
    channel = await redis_layer.new_channel()
    first = asyncio.ensure_future(batches.add("mcp.session.first", channel))
    await asyncio.sleep(0)  # the sender starts; its pipeline is on its way
    await asyncio.sleep(0)
    late = [asyncio.ensure_future(batches.add(f"mcp.session.late{n}", channel)) for n in range(3)]
    await asyncio.gather(first, *late)
    assert sum(sent) == 8 and len(sent) in (1, 2)


async def test_a_pipeline_that_cannot_be_sent_fails_each_join_and_is_reported() -> None:
    from channels_redis.core import RedisChannelLayer

    # Nothing listens on port 1: every attempt is refused at once.
    layer = RedisChannelLayer(hosts=[("127.0.0.1", 1)], prefix="django_mcp_batches_refused")
    heard: list[str] = []

    def receiver(sender: Any, operation: str, **kwargs: Any) -> None:
        heard.append(operation)

    channel_layer_failed.connect(receiver)
    try:
        batches = GroupBatches(layer)
        outcomes = await asyncio.gather(*(batches.add(f"mcp.session.g{n}", "specific.abc!def") for n in range(4)),
                                        return_exceptions=True)
    finally:
        channel_layer_failed.disconnect(receiver)
        await layer.close_pools()
    assert all(isinstance(outcome, Exception) for outcome in outcomes), outcomes
    assert heard == ["group_add"]  # one batch, given up once after its attempts


async def test_a_bad_group_name_fails_its_own_join_only(redis_layer) -> None:
    batches = GroupBatches(redis_layer)
    channel = await redis_layer.new_channel()
    outcomes = await asyncio.gather(batches.add("no spaces allowed", channel), batches.add("mcp.session.ok", channel),
                                    return_exceptions=True)
    assert isinstance(outcomes[0], TypeError) and outcomes[1] is None


async def test_another_layer_gets_its_own_calls() -> None:
    layer = InMemoryChannelLayer()
    batches = GroupBatches(layer)
    assert not batches.batched and not pipelines_groups(layer)
    channel = await layer.new_channel()
    await batches.add("mcp.session.one", channel)
    await layer.group_send("mcp.session.one", {"type": "mcp.test"})
    assert (await asyncio.wait_for(layer.receive(channel), 1))["type"] == "mcp.test"
    await batches.discard("mcp.session.one", channel)
    assert "mcp.session.one" not in layer.groups

