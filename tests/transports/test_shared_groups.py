"""
Channel-layer groups through one channel per worker (django_mcp/transports/shared_groups.py), on
Channels' in-process layer: one layer member however many streams listen, every listener hearing
each event once, the layer's group joined by the first and left after the last, joins and leaves
racing a publish, many groups joined at once without waiting for one another, a message sent
straight to the worker for one group's streams, and a layer that stays away ending every
listener's stream.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from django_mcp.fanout import BROADCAST_GROUP, NOTIFY, SESSION_CLOSED, resource_group, session_group
from django_mcp.transports import layer_reading
from django_mcp.transports.shared_groups import SharedGroups


class Listener:
    """A member that records what the worker hands it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.lost = False
        self.heard = asyncio.Event()

    def receive_shared(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self.heard.set()

    def shared_groups_lost(self) -> None:
        self.lost = True


class RestartedLayer(InMemoryChannelLayer):
    """Fails one read, then forgets every group, as a restarted Redis has."""

    failed = False

    async def receive(self, channel: str) -> dict[str, Any]:
        if not self.failed:
            self.failed = True
            self.groups.clear()
            raise ConnectionError("Redis restarted")
        return await super().receive(channel)


def notification(group: str, n: int = 1) -> dict[str, Any]:
    return {"type": NOTIFY, "kind": "tools", "group": group, "n": n,
            "message": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}}


async def settle(layer: InMemoryChannelLayer, channel: str) -> None:
    """Until the worker's reader has taken everything queued for its channel."""
    for _ in range(200):
        if layer.channels.get(channel) is None or layer.channels[channel].empty():
            await asyncio.sleep(0.01)
            return
        await asyncio.sleep(0.01)


async def test_a_thousand_listeners_are_one_member_and_hear_each_notification_once() -> None:
    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    listeners = [Listener() for _ in range(1000)]
    await asyncio.gather(*(shared.join(BROADCAST_GROUP, listener) for listener in listeners))
    assert list(layer.groups[BROADCAST_GROUP]) == [shared.channel]  # one member for the worker
    await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP, 1))
    await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP, 2))
    await settle(layer, shared.channel)
    assert all([event["n"] for event in listener.events] == [1, 2] for listener in listeners)


async def test_events_go_only_to_their_groups_listeners() -> None:
    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    broadcast, book = Listener(), Listener()
    await shared.join(BROADCAST_GROUP, broadcast)
    await shared.join(resource_group("library://book/1"), book)
    await layer.group_send(resource_group("library://book/1"), notification(resource_group("library://book/1")))
    await settle(layer, shared.channel)
    assert (len(broadcast.events), len(book.events)) == (0, 1)


async def test_the_layer_group_is_joined_by_the_first_and_left_after_the_last() -> None:
    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    first, second = Listener(), Listener()
    await shared.join(BROADCAST_GROUP, first)
    await shared.join(BROADCAST_GROUP, second)
    await shared.leave(BROADCAST_GROUP, first)
    assert layer.groups.get(BROADCAST_GROUP)  # the second still listens
    await shared.leave(BROADCAST_GROUP, second)
    assert not layer.groups.get(BROADCAST_GROUP)
    assert shared.groups == {} and shared.joined() == set()
    again = Listener()
    await shared.join(BROADCAST_GROUP, again)  # and joined again for a newcomer
    await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP))
    await asyncio.wait_for(again.heard.wait(), 5)


async def test_a_join_racing_the_last_leave_still_hears_what_follows() -> None:
    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    leaving, arriving = Listener(), Listener()
    await shared.join(BROADCAST_GROUP, leaving)
    # The last member leaves (the layer's group_discard on its way) while another joins.
    await asyncio.gather(shared.leave(BROADCAST_GROUP, leaving), shared.join(BROADCAST_GROUP, arriving))
    await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP))
    await asyncio.wait_for(arriving.heard.wait(), 5)
    assert leaving.events == []


async def test_listeners_leaving_while_a_publish_is_handed_out_lose_nothing_of_the_others() -> None:
    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    staying = [Listener() for _ in range(200)]
    going = [Listener() for _ in range(200)]
    await asyncio.gather(*(shared.join(BROADCAST_GROUP, listener) for listener in staying + going))
    publish = asyncio.ensure_future(layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP)))
    await asyncio.gather(publish, *(shared.leave(BROADCAST_GROUP, listener) for listener in going))
    await settle(layer, shared.channel)
    assert all(len(listener.events) == 1 for listener in staying)
    assert all(len(listener.events) <= 1 for listener in going)


async def test_a_layer_that_stays_away_ends_every_listeners_stream(monkeypatch) -> None:
    class AwayLayer(InMemoryChannelLayer):
        """Channels' in-process layer whose reads fail, as channels_redis's do while Redis is down."""

        async def receive(self, channel: str) -> dict[str, Any]:
            raise ConnectionError("the layer is away")

    monkeypatch.setattr(layer_reading, "READER_ATTEMPTS", 2)
    layer = AwayLayer()
    shared = SharedGroups(layer)
    listeners = [Listener() for _ in range(3)]
    for listener in listeners:
        await shared.join(BROADCAST_GROUP, listener)
    for _ in range(100):
        if all(listener.lost for listener in listeners):
            break
        await asyncio.sleep(0.05)
    assert all(listener.lost for listener in listeners)
    assert shared.channel is None and shared.groups == {}  # the next join starts afresh


@pytest.mark.parametrize("group", [BROADCAST_GROUP, resource_group("memo://greeting"), session_group("abc")])
async def test_the_worker_joins_its_groups_again_after_the_layer_was_away(group: str) -> None:
    layer = RestartedLayer()
    shared = SharedGroups(layer)
    listener = Listener()
    await shared.join(group, listener)
    for _ in range(100):
        if layer.groups.get(group):
            break
        # The reader sees the failure, then the next read succeeds and the worker joins again;
        # a message to its channel wakes that read.
        await layer.send(shared.channel, {"type": "mcp.health"})
        await asyncio.sleep(0.05)
    assert list(layer.groups.get(group, ())) == [shared.channel]
    await layer.group_send(group, notification(group))
    await asyncio.wait_for(listener.heard.wait(), 5)


async def test_sessions_groups_are_one_member_each_and_hear_only_their_own() -> None:
    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    sessions = {f"s{n}": Listener() for n in range(300)}
    await asyncio.gather(*(shared.join(session_group(name), listener) for name, listener in sessions.items()))
    assert all(list(layer.groups[session_group(name)]) == [shared.channel] for name in sessions)
    await layer.group_send(session_group("s7"), {"type": SESSION_CLOSED, "group": session_group("s7")})
    await settle(layer, shared.channel)
    assert [name for name, listener in sessions.items() if listener.events] == ["s7"]


async def test_joins_of_different_groups_do_not_wait_for_one_another() -> None:
    class SlowLayer(InMemoryChannelLayer):
        """Each group_add takes 50 ms, as a round trip to a busy Redis may."""

        async def group_add(self, group: str, channel: str) -> None:
            await asyncio.sleep(0.05)
            await super().group_add(group, channel)

    shared = SharedGroups(SlowLayer())
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.gather(*(shared.join(session_group(f"s{n}"), Listener()) for n in range(20)))
    # One after another would take a second; together (within the layer's concurrency) a few rounds.
    assert loop.time() - started < 0.5


async def test_a_message_for_one_groups_streams_reaches_them_without_a_layer_group() -> None:
    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    listener = Listener()
    await shared.join(session_group("abc"), listener)
    channel = await shared.worker_channel()
    await layer.send(channel, {"type": "mcp.sse_send", "group": session_group("abc"), "message": {}})
    await layer.send(channel, {"type": "mcp.sse_send", "group": session_group("other"), "message": {}})
    await settle(layer, channel)
    assert [event["group"] for event in listener.events] == [session_group("abc")]


async def test_a_member_that_fails_to_take_an_event_does_not_stop_the_others(caplog) -> None:
    class Broken(Listener):
        def receive_shared(self, event: dict[str, Any]) -> None:
            raise RuntimeError("a bug in one stream")

    layer = InMemoryChannelLayer()
    shared = SharedGroups(layer)
    broken, fine = Broken(), Listener()
    await shared.join(BROADCAST_GROUP, broken)
    await shared.join(BROADCAST_GROUP, fine)
    for n in (1, 2):
        await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP, n))
    await settle(layer, shared.channel)
    assert [event["n"] for event in fine.events] == [1, 2]
    assert "could not take" in caplog.text


async def test_the_worker_joins_again_when_the_layer_is_back_though_nothing_arrives() -> None:
    layer = RestartedLayer()
    shared = SharedGroups(layer)
    listener = Listener()
    await shared.join(BROADCAST_GROUP, listener)
    for _ in range(100):
        if layer.groups.get(BROADCAST_GROUP):
            break
        await asyncio.sleep(0.02)
    assert list(layer.groups.get(BROADCAST_GROUP, ())) == [shared.channel]
    await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP))
    await asyncio.wait_for(listener.heard.wait(), 5)


async def test_reads_that_only_time_out_are_not_an_outage(monkeypatch) -> None:
    class TimeoutError(Exception):  # noqa: A001 - named as redis-py names its own
        """redis-py's: raised when Redis has not replied within socket_timeout (5 s by default)."""

    class IdleRedisLayer(InMemoryChannelLayer):
        """Every blocking read times out, as an idle channels_redis one on redis-py 8 does."""

        reads = 0

        async def receive(self, channel: str) -> dict[str, Any]:
            self.reads += 1
            if self.reads <= 3 * layer_reading.READER_ATTEMPTS:
                raise TimeoutError("Timeout reading from 127.0.0.1:6379")
            return await super().receive(channel)

    monkeypatch.setattr(layer_reading, "READER_ATTEMPTS", 2)
    layer = IdleRedisLayer()
    shared = SharedGroups(layer)
    listener = Listener()
    await shared.join(BROADCAST_GROUP, listener)
    await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP))
    await asyncio.wait_for(listener.heard.wait(), 5)
    assert not listener.lost and layer.reads > 3 * layer_reading.READER_ATTEMPTS


async def test_a_quiet_worker_on_real_redis_keeps_listening(services, monkeypatch) -> None:
    """
    On channels_redis with redis-py 8, an idle read ends in redis-py's TimeoutError every few
    seconds (its socket_timeout and channels_redis's blocking read are both 5 s). Counted as
    failures, they made a quiet worker give up on a healthy Redis and end every stream after a
    minute; here, after one failure. 12 s of quiet must change nothing.
    """
    from channels_redis.core import RedisChannelLayer

    monkeypatch.setattr(layer_reading, "READER_ATTEMPTS", 0)  # the first real failure gives up
    layer = RedisChannelLayer(hosts=[("127.0.0.1", 6379)], prefix=f"{services['MCP_TEST_REDIS_PREFIX']}_quiet")
    shared = SharedGroups(layer)
    listener = Listener()
    await shared.join(BROADCAST_GROUP, listener)
    try:
        await asyncio.sleep(12)
        assert not listener.lost and shared.channel is not None
        await layer.group_send(BROADCAST_GROUP, notification(BROADCAST_GROUP))
        await asyncio.wait_for(listener.heard.wait(), 5)
    finally:
        await shared.leave(BROADCAST_GROUP, listener)
        for task in shared.tasks:
            task.cancel()
        await layer.flush()
