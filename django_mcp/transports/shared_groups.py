"""
The notification groups through one channel per worker: the broadcast group (list-changed
notifications) and each resource's group (``notifications/resources/updated``) are joined once
per worker, however many of its streams want them, and the worker hands each notification to
those streams in process.

Before, every stream joined these groups with a channel of its own, so an announcement to N
listeners on a worker was N channel-layer messages, each read from Redis by its own round trip:
cost grew with streams, not with workers. Now it is one message per worker (``fanout.publish``
names the group in the event, since a channel in several groups cannot otherwise tell which one a
message came through), and joining or leaving the layer's group happens only when a worker's first
stream needs it and when its last one goes.

Membership changes at the layer run one at a time per worker (``changing``), and a stream is a
member before the layer's ``group_add`` is sent, so a notification published once a stream's
``join`` has returned always reaches it (the listen stream acknowledges only then; a GET stream
re-reads its session only then). A layer that stays unreachable ends every member's stream, as a
stream's own reader does, so clients reconnect; after a failure the worker joins every group it
holds again (a restarted Redis has forgotten them), and it renews them now and then, because
channels_redis drops a group member after its ``group_expiry`` (a day by default).

Messages for one session (client answers, cancellations, subscription changes, its end) still
reach the stream's own channel through the session's group.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, Protocol

from ..fanout import layer_call
from .layer_reading import PatientReader


logger = logging.getLogger("django_mcp.transports")

# How often the worker renews its memberships (channels_redis's group_expiry is a day by default).
RENEW_SECONDS = 3600.0


class Member(Protocol):
    """A stream that receives a shared group's notifications."""

    def receive_shared(self, event: dict[str, Any]) -> None: ...

    def shared_groups_lost(self) -> None: ...


class SharedGroups:
    """This worker's one channel in the notification groups of one channel layer, on one event loop."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.channel: str | None = None
        self.members: dict[str, set[Member]] = {}
        # Groups the worker's channel is in at the layer: added once the layer has said so, so a
        # stream that finds its group here may count on hearing what is published from now on.
        self.joined: set[str] = set()
        self.changing = asyncio.Lock()
        self.tasks: list[asyncio.Task[Any]] = []

    async def join(self, group: str, member: Member) -> None:
        """Make ``member`` hear ``group``; the worker joins it at the layer if it is the first."""
        members = self.members.get(group)
        if members and group in self.joined:
            members.add(member)  # the worker is in the group already: nothing to ask the layer
            return
        async with self.changing:
            # A member before the layer hears of it: what arrives meanwhile reaches it too.
            self.members.setdefault(group, set()).add(member)
            if group in self.joined:
                return
            try:
                if self.channel is None:
                    await self._open()
                await layer_call(self.layer.group_add, group, self.channel)
            except BaseException:
                self._forget(group, member)
                raise
            self.joined.add(group)

    async def leave(self, group: str, member: Member) -> None:
        """``member`` no longer hears ``group``; the worker leaves it at the layer after its last member."""
        members = self.members.get(group)
        if not members or member not in members:
            return
        members.discard(member)
        if members:
            return
        async with self.changing:
            if self.members.get(group):
                return  # a stream joined while this one waited
            self.members.pop(group, None)
            if group in self.joined and self.channel is not None:
                self.joined.discard(group)
                try:
                    await layer_call(self.layer.group_discard, group, self.channel)
                except Exception:
                    logger.warning("Could not leave channel group %s", group, exc_info=True)

    def _forget(self, group: str, member: Member) -> None:
        members = self.members.get(group)
        if members is not None:
            members.discard(member)
            if not members:
                del self.members[group]

    async def _open(self) -> None:
        self.channel = await self.layer.new_channel()
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self._read(self.channel)), loop.create_task(self._renew())]

    async def _read(self, channel: str) -> None:
        reader = PatientReader(self.layer, channel)
        while (event := await reader.next()) is not None:
            if reader.recovered:
                # The layer was away: a restarted Redis has forgotten the worker's memberships.
                # (Kept in self.tasks: the loop holds only a weak reference to a task.)
                self.tasks.append(asyncio.get_running_loop().create_task(self._rejoin()))
            for member in tuple(self.members.get(event.get("group"), ())):
                member.receive_shared(event)
        self._give_up()

    async def _rejoin(self) -> None:
        async with self.changing:
            for group in tuple(self.joined):
                try:
                    await layer_call(self.layer.group_add, group, self.channel)
                except Exception:
                    logger.warning("Could not join channel group %s again", group, exc_info=True)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            await self._rejoin()

    def _give_up(self) -> None:
        """End every member's stream and start afresh: the next join opens a new channel."""
        members = {member for group_members in self.members.values() for member in group_members}
        self.members.clear()
        self.joined.clear()
        self.channel = None
        for task in self.tasks:
            if task is not asyncio.current_task():
                task.cancel()
        self.tasks = []
        for member in members:
            member.shared_groups_lost()


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, SharedGroups]] = weakref.WeakKeyDictionary()


def shared_groups_for(layer: Any) -> SharedGroups:
    """The worker's :class:`SharedGroups` for ``layer`` on the running event loop (made on first need)."""
    per_layer = _by_loop.setdefault(asyncio.get_running_loop(), {})
    shared = per_layer.get(id(layer))
    if shared is None or shared.layer is not layer:
        shared = per_layer[id(layer)] = SharedGroups(layer)
    return shared
