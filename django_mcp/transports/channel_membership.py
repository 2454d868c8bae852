"""
A request's membership of channel-layer groups, through its worker's one channel
(``shared_groups.py``): joining on first need, events handed over in order by one task of the
request's, and leaving every group exactly once when the request is done. A request owns no
channel of its own.
"""

import asyncio
import logging
from collections import deque
from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer

from ..conf import mcp_settings
from ..fanout import EVENT_TYPES
from .shared_groups import shared_groups_for


logger = logging.getLogger("django_mcp.transports")


class ChannelMembershipMixin:
    """Joining and leaving groups for :class:`~django_mcp.transports.base.HttpStreamConsumer`."""

    channel_layer: Any
    groups: set[str]
    _left_for_good = False
    spawn: Any
    #: Events of this request's groups waiting for it, while one task hands them over.
    shared_inbox: "deque[dict[str, Any]] | None" = None
    # The consumer's (RespondingMixin): chunks held back while more events wait, and their flush.
    _held_sse: list[bytes] | None
    hold_sse: Any
    flush_sse: Any

    async def join(self, group: str) -> bool:
        """
        Subscribe this request to a channel-layer group; False without a channel layer, or once the
        request has left its groups for good (a join racing that teardown takes itself back).
        """
        if self.channel_layer is None or self._left_for_good:
            return False
        if group in self.groups:
            return True
        if not self.groups:
            self.groups = set()
        self.groups.add(group)
        shared = shared_groups_for(self.channel_layer)
        try:
            await shared.join(group, self)
        except BaseException:
            # A teardown meanwhile (leave_all: the request was cancelled or ended while the layer
            # answered) has emptied the groups already, into a frozenset.
            if not self._left_for_good:
                self.groups.discard(group)
            raise
        if self._left_for_good:
            await shared.leave(group, self)  # teardown ran while the join was on its way
            return False
        return True

    async def worker_channel(self) -> str | None:
        """
        The channel of this request's worker, where a message sent for one of its groups reaches it
        (``fanout.send_to_channel``). None without a layer or once the request left for good.
        """
        if self.channel_layer is None or self._left_for_good:
            return None
        return await shared_groups_for(self.channel_layer).worker_channel()

    async def leave(self, group: str) -> None:
        if group not in self.groups or self.channel_layer is None:
            return
        self.groups.discard(group)
        await shared_groups_for(self.channel_layer).leave(group, self)

    def receive_shared(self, event: dict[str, Any]) -> None:
        """
        An event of one of this request's groups, from the worker's reader: queued, and handed over in order by
        one task of this request's. A consumer so far behind that ``STREAM_QUEUE_SIZE`` events
        wait ends its stream instead, so its client reconnects and reads afresh.
        """
        if self._left_for_good:
            return
        inbox = self.shared_inbox
        if inbox is None and self.take_at_once(event):
            return
        if inbox is None:
            self.shared_inbox = deque((event,))
            # Eagerly: the worker's reader hands an event to a thousand streams in one pass, and
            # each that can write at once is done before the next, with no task left over.
            self.spawn(self._hand_over_shared(), eager=True)
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
                event = inbox.popleft()
                if inbox:
                    self.hold_sse()  # more waiting behind this one: what they write goes out together
                if await self._handle_event(event):
                    return
        finally:
            if self.shared_inbox is inbox:
                self.shared_inbox = None
            if self._held_sse is not None:
                await self.flush_sse()

    def take_at_once(self, event: dict[str, Any]) -> bool:
        """
        Handle ``event`` here and now, without a task, where that needs no waiting (a listen
        stream queueing a notification for its own writer); True when done. Asked only when no
        earlier event waits, so the order holds.
        """
        return False

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

    async def leave_all(self) -> None:
        """Leave every group joined, once; later joins are refused."""
        self._left_for_good = True
        # Taken before the first await: a second cleanup running meanwhile (a request ending as its
        # connection closes) finds nothing left to do.
        groups = list(self.groups)
        if groups:
            self.groups = frozenset()
        self.shared_inbox = None
        if self.channel_layer is None or not groups:
            return
        shared = shared_groups_for(self.channel_layer)
        for group in groups:
            await shared.leave(group, self)
