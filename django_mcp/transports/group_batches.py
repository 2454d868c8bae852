"""
A worker's group joins and leaves, sent to channels_redis in pipelines.

channels_redis's ``group_add`` is two commands, each its own round trip through redis-py's
connection pool (a ``ZADD`` of the channel into the group's sorted set, then an ``EXPIRE``), and
``group_discard`` one (``ZREM``). When a thousand clients reconnect at once, each GET stream's
session group is a new group for the worker, and those calls were a tenth of the worker's CPU
(about 100 us each on the machine of ``benchmarks/burst.py``, against about 20 us for the same
commands in a pipeline). So the joins (and, apart, the leaves) asked for while one pipeline is in
flight wait for it and go together in the next one, per Redis shard, with the same commands, keys
and expiry the layer's own methods use. Every command is idempotent, so a pipeline that failed
half-way is simply sent again (``fanout.layer_call``: three attempts, the worker's concurrency
limit). Any other layer gets its own ``group_add`` / ``group_discard``, one call per group.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import Any

from ..fanout import layer_call

# At most this many groups per pipeline: a Redis reply (and the time it holds the loop) stays small.
MAX_BATCH = 500


def pipelines_groups(layer: Any) -> bool:
    """Whether ``layer`` is channels_redis's ``RedisChannelLayer`` (the layer whose group commands are batched)."""
    try:
        from channels_redis.core import RedisChannelLayer
    except ImportError:
        return False
    return isinstance(layer, RedisChannelLayer)


class GroupBatches:
    """
    ``add`` and ``discard`` of one channel layer's groups, for one event loop: with
    channels_redis, those asked for together go to Redis in one pipeline per shard; with any other
    layer, each is the layer's own call.
    """

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.batched = pipelines_groups(layer)
        self.waiting: dict[str, list[tuple[str, str, asyncio.Future[None]]]] = {"group_add": [], "group_discard": []}
        self.senders: dict[str, asyncio.Task[None] | None] = {"group_add": None, "group_discard": None}

    async def add(self, group: str, channel: str) -> None:
        """Put ``channel`` in ``group``; returns once the layer has it there."""
        await self._run("group_add", group, channel)

    async def discard(self, group: str, channel: str) -> None:
        """Take ``channel`` out of ``group``; returns once the layer has done so."""
        await self._run("group_discard", group, channel)

    async def _run(self, operation: str, group: str, channel: str) -> None:
        if not self.batched:
            await layer_call(getattr(self.layer, operation), group, channel)
            return
        # The checks the layer's own method makes (they raise TypeError), here, so that a bad name
        # fails its caller alone and not the whole pipeline.
        self.layer.require_valid_group_name(group)
        self.layer.require_valid_channel_name(channel)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting[operation].append((group, channel, done))
        sender = self.senders[operation]
        if sender is None or sender.done():
            # Started now, it first lets the loop run the other streams' joins of this pass.
            self.senders[operation] = asyncio.get_running_loop().create_task(self._send_all(operation))
        await done

    async def _send_all(self, operation: str) -> None:
        await asyncio.sleep(0)
        waiting = self.waiting[operation]
        while waiting:
            batch, waiting[:] = waiting[:MAX_BATCH], waiting[MAX_BATCH:]
            try:
                await layer_call(self._pipelines, operation, batch, name=operation)
            except Exception as exc:
                for _group, _channel, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for _group, _channel, done in batch:
                    if not done.done():
                        done.set_result(None)

    async def _pipelines(self, operation: str, batch: list[tuple[str, str, asyncio.Future[None]]]) -> None:
        layer = self.layer
        by_shard: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for group, channel, _done in batch:
            by_shard[layer.consistent_hash(group)].append((group, channel))
        for index, members in by_shard.items():
            pipeline = layer.connection(index).pipeline(transaction=False)
            now = time.time()
            for group, channel in members:
                key = layer._group_key(group)
                if operation == "group_add":
                    # As RedisChannelLayer.group_add: the member scored by when it joined, and the
                    # group kept for group_expiry after its last join.
                    pipeline.zadd(key, {channel: now})
                    pipeline.expire(key, layer.group_expiry)
                else:
                    pipeline.zrem(key, channel)
            await pipeline.execute()


__all__ = ["GroupBatches", "MAX_BATCH", "pipelines_groups"]
