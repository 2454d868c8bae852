"""
A request's membership of channel-layer groups: a channel made on first need, a reader that
dispatches its events to the consumer (and survives a layer that is briefly away), and leaving
every group exactly once when the request is done. The notification groups (broadcast and
resources) are joined through the worker's one shared channel instead (``shared_groups.py``),
which hands their events to the consumer in process; only a session's own group needs a channel
of the stream's.
"""

import asyncio
import logging
from collections import deque
from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer

from ..conf import mcp_settings
from ..fanout import EVENT_TYPES, is_shared_group, layer_call
from .layer_reading import PatientReader
from .shared_groups import shared_groups_for


logger = logging.getLogger("django_mcp.transports")



class ChannelMembershipMixin:
    """Joining and leaving groups for :class:`~django_mcp.transports.base.HttpStreamConsumer`."""

    channel_layer: Any
    channel_name: str | None
    groups: set[str]
    _reader: "asyncio.Task[Any] | None"
    _left_for_good = False
    #: Events of the shared groups waiting for this consumer, while one task hands them over.
    shared_inbox: "deque[dict[str, Any]] | None" = None

    async def join(self, group: str) -> bool:
        """
        Subscribe this request to a channel-layer group; False without a channel layer, or once the
        request has left its groups for good (a join racing that teardown takes itself back).
        """
        if self.channel_layer is None or self._left_for_good:
            return False
        if is_shared_group(group):
            return await self._join_shared(group)
        if await self.own_channel() is None:
            return False
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

    async def own_channel(self) -> str | None:
        """
        This request's own channel, made (with its reader) on first need: what other workers send
        to this stream alone arrives there. None without a layer or once the request left for good.
        """
        if self.channel_layer is None or self._left_for_good:
            return None
        if self.channel_name is None:
            channel = await self.channel_layer.new_channel()
            if self._left_for_good:
                return None
            if self.channel_name is None:  # another join may have made one meanwhile
                self.channel_name = channel
                self._reader = asyncio.ensure_future(self._read_channel(channel))
        return self.channel_name

    async def _join_shared(self, group: str) -> bool:
        if group in self.groups:
            return True
        if not self.groups:
            self.groups = set()
        self.groups.add(group)
        shared = shared_groups_for(self.channel_layer)
        await shared.join(group, self)
        if self._left_for_good:
            await shared.leave(group, self)  # teardown ran while the join was on its way
            return False
        return True

    async def leave(self, group: str) -> None:
        if group not in self.groups or self.channel_layer is None:
            return
        if is_shared_group(group):
            self.groups.discard(group)
            await shared_groups_for(self.channel_layer).leave(group, self)
        elif self.channel_name is not None:
            self.groups.discard(group)
            await layer_call(self.channel_layer.group_discard, group, self.channel_name)

    def receive_shared(self, event: dict[str, Any]) -> None:
        """
        An event of a shared group, from the worker's reader: queued, and handed over in order by
        one task of this request's. A consumer so far behind that ``STREAM_QUEUE_SIZE`` events
        wait ends its stream instead, so its client reconnects and reads afresh.
        """
        if self._left_for_good:
            return
        inbox = self.shared_inbox
        if inbox is None:
            self.shared_inbox = deque((event,))
            self.spawn(self._hand_over_shared())
            return
        if len(inbox) >= mcp_settings.STREAM_QUEUE_SIZE:
            logger.warning("A stream fell %d notifications behind; ending it", len(inbox))
            inbox.clear()
            self.spawn(self._end_stream())
            return
        inbox.append(event)

    async def _hand_over_shared(self) -> None:
        inbox = self.shared_inbox
        try:
            while inbox:
                if await self._handle_event(inbox.popleft()):
                    return
        finally:
            if self.shared_inbox is inbox:
                self.shared_inbox = None

    def shared_groups_lost(self) -> None:
        """The worker gave up on the channel layer: end the stream, so its client reconnects."""
        if not self._left_for_good:
            self.spawn(self._end_stream())

    async def _end_stream(self) -> None:
        if self.sse_started:
            await self.end_sse()
        self.finished.set()

    async def _handle_event(self, event: dict[str, Any]) -> bool:
        """Dispatch one channel-layer event to its handler; True when the consumer stopped."""
        if getattr(self, get_handler_name(event), None) is None:
            if event.get("type") not in EVENT_TYPES:
                logger.warning("Ignoring unknown channel-layer event type %r", event.get("type"))
            # A known type without a handler here is meant for another kind of consumer.
            return False
        try:
            await self.dispatch(event)
        except StopConsumer:
            return True
        except Exception:
            logger.exception("Error handling channel event %s", event.get("type"))
        return False

    async def _read_channel(self, channel: str) -> None:
        assert self.channel_layer is not None
        reader = PatientReader(self.channel_layer, channel)
        while (event := await reader.next()) is not None:
            if await self._handle_event(event):
                return
        await self._end_stream()  # the layer stayed away: the client reconnects

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
        self.shared_inbox = None
        if self.channel_layer is None:
            return
        for group in groups:
            try:
                if is_shared_group(group):
                    await shared_groups_for(self.channel_layer).leave(group, self)
                elif channel is not None:
                    await layer_call(self.channel_layer.group_discard, group, channel)
            except Exception:
                logger.warning("Could not leave channel group %s", group, exc_info=True)
