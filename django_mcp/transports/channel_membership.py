"""
A request's membership of channel-layer groups: a channel made on first need, a reader that
dispatches its events to the consumer (and survives a layer that is briefly away), and leaving
every group exactly once when the request is done.
"""

import asyncio
import logging
from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer

from ..fanout import EVENT_TYPES, layer_call, layer_failed


logger = logging.getLogger("django_mcp.transports")

# Failed channel-layer reads in a row (about 6 s with the back-off) before a stream gives up.
READER_ATTEMPTS = 5


class ChannelMembershipMixin:
    """Joining and leaving groups for :class:`~django_mcp.transports.base.HttpStreamConsumer`."""

    channel_layer: Any
    channel_name: str | None
    groups: set[str]
    _reader: "asyncio.Task[Any] | None"
    _left_for_good = False

    async def join(self, group: str) -> bool:
        """
        Subscribe this request to a channel-layer group; False without a channel layer, or once the
        request has left its groups for good (a join racing that teardown takes itself back).
        """
        if self.channel_layer is None or self._left_for_good:
            return False
        if self.channel_name is None:
            channel = await self.channel_layer.new_channel()
            if self._left_for_good:
                return False
            if self.channel_name is None:  # another join may have made one meanwhile
                self.channel_name = channel
                self._reader = asyncio.ensure_future(self._read_channel(channel))
        if group not in self.groups:
            if not self.groups:
                self.groups = set()
            self.groups.add(group)
            channel = self.channel_name
            await layer_call(self.channel_layer.group_add, group, channel)
            if self._left_for_good:
                # Teardown ran while the add was on its way: it could not take this one back.
                await layer_call(self.channel_layer.group_discard, group, channel)
                return False
        return True

    async def leave(self, group: str) -> None:
        if group in self.groups and self.channel_layer is not None and self.channel_name is not None:
            self.groups.discard(group)
            await layer_call(self.channel_layer.group_discard, group, self.channel_name)

    async def _read_channel(self, channel: str) -> None:
        assert self.channel_layer is not None
        failures = 0
        while True:
            try:
                event = await self.channel_layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # The layer is away (Redis down). Retry for a while; then end the response, so a
                # stream's client reconnects instead of listening to a channel nobody can reach.
                failures += 1
                if failures > READER_ATTEMPTS:
                    layer_failed("receive", exc)
                    logger.warning("Channel layer unreachable; ending the stream so its client reconnects",
                                   exc_info=True)
                    if self.sse_started:
                        await self.end_sse()
                    self.finished.set()
                    return
                await asyncio.sleep(min(0.1 * 2 ** failures, 2.0))
                continue
            failures = 0
            if getattr(self, get_handler_name(event), None) is None:
                if event.get("type") not in EVENT_TYPES:
                    logger.warning("Ignoring unknown channel-layer event type %r", event.get("type"))
                # A known type without a handler here is meant for another kind of consumer.
                continue
            try:
                await self.dispatch(event)
            except StopConsumer:
                return
            except Exception:
                logger.exception("Error handling channel event %s", event.get("type"))

    async def leave_all(self) -> None:
        """Stop the reader and leave every group joined, once; later joins are refused."""
        self._left_for_good = True
        if self._reader is not None:
            self._reader.cancel()
            self._reader = None
        # Taken before the first await: a second cleanup running meanwhile (a request ending as its
        # connection closes) finds nothing left to do instead of leaving groups with no channel.
        channel, groups = self.channel_name, list(self.groups)
        if channel is not None:
            self.channel_name = None
        if groups:
            self.groups = frozenset()
        if self.channel_layer is not None and channel is not None:
            for group in groups:
                try:
                    await layer_call(self.channel_layer.group_discard, group, channel)
                except Exception:
                    logger.warning("Could not leave channel group %s", group, exc_info=True)
