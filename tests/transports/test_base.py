"""The consumer plumbing shared by the HTTP transports: the channel-layer reader, the consumer class."""

import asyncio
import logging

from channels.layers import InMemoryChannelLayer

from django_mcp.fanout import SSE_SEND, session_group
from django_mcp.transports.base import HttpStreamConsumer
from django_mcp.transports.shared_groups import shared_groups_for


class Listener(HttpStreamConsumer):
    """Handles one event type, as a real consumer handles its own."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict] = []

    async def mcp_notify(self, event: dict) -> None:
        self.seen.append(event)


async def test_the_reader_logs_unknown_events_and_skips_other_consumers_events(caplog):
    consumer = Listener()
    consumer.channel_layer = InMemoryChannelLayer()
    consumer.new_task = asyncio.ensure_future
    assert await consumer.join(session_group("abc"))
    channel = await consumer.worker_channel()
    with caplog.at_level(logging.WARNING, logger="django_mcp.transports"):
        for event in ({"type": SSE_SEND, "message": {}}, {"type": "mcp.typo"}, {"type": "mcp.notify", "kind": "tools"}):
            await consumer.channel_layer.send(channel, {**event, "group": session_group("abc")})
        for _ in range(50):
            if consumer.seen:
                break
            await asyncio.sleep(0.01)
    await consumer.leave_all()
    assert consumer.seen == [{"type": "mcp.notify", "kind": "tools", "group": session_group("abc")}]
    warnings = [record.getMessage() for record in caplog.records]
    # A known type meant for another kind of consumer is no news; a type nobody defines is.
    assert warnings == ["Ignoring unknown channel-layer event type 'mcp.typo'"]
    assert not shared_groups_for(consumer.channel_layer).groups  # left, and the worker with it


def test_a_subclass_may_make_a_request_attribute_a_property():
    # The instance made when a consumer class is created sets every name of instance_attributes:
    # a name a subclass turned into a property (here read-only) must be left alone.
    class FixedSite(HttpStreamConsumer):
        @property
        def site(self):
            return "fixed"

    assert FixedSite().site == "fixed"
    assert "site" in HttpStreamConsumer.instance_attributes


class SlowLayer(InMemoryChannelLayer):
    """A layer whose ``group_add`` waits until the test lets it go on."""

    def __init__(self) -> None:
        super().__init__()
        self.adding = asyncio.Event()
        self.go_on = asyncio.Event()

    async def group_add(self, group: str, channel: str) -> None:
        self.adding.set()
        await self.go_on.wait()
        await super().group_add(group, channel)


async def test_a_join_cancelled_after_the_request_left_its_groups_ends_quietly():
    # The request ends (leave_all) while its join waits for the layer, and the join is cancelled
    # with it: the cancellation goes through as it came, not as an error about the emptied groups.
    consumer = Listener()
    consumer.channel_layer = layer = SlowLayer()
    consumer.new_task = asyncio.ensure_future
    joining = asyncio.ensure_future(consumer.join(session_group("abc")))
    await asyncio.wait_for(layer.adding.wait(), 5)
    leaving = asyncio.ensure_future(consumer.leave_all())  # waits for the join's hold on the group
    await asyncio.sleep(0)
    joining.cancel()
    outcome = (await asyncio.wait_for(asyncio.gather(joining, leaving, return_exceptions=True), 5))[0]
    assert isinstance(outcome, asyncio.CancelledError), outcome
    assert consumer.groups == frozenset()
    assert not shared_groups_for(layer).groups
