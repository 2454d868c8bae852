"""
A worker's one channel: every channel-layer group a stream needs — the broadcast group (list-changed
notifications), each resource's group (``notifications/resources/updated``), each session's group
(client answers, cancellations, subscription changes, the session's end) and a resumable stream's
groups — is joined once per worker with this channel, however many of its streams want it, and the
worker hands each event to those streams in process. An open stream owns no channel-layer queue.

Before, every stream had a channel of its own and joined these groups with it, so an announcement
to N listeners on a worker was N channel-layer messages, each read by its own reader: cost grew
with streams, not with workers. Now it is one message per worker. Every event names the group it
was published to (``fanout.publish`` adds ``"group"``): a channel in many groups cannot otherwise
tell which one a message came through. A message meant for one worker's stream alone (an HTTP+SSE
session's answers, a resumer's probe reply) is sent to the worker's channel and names the group
of the streams it is for (``fanout.send_to_group_member``).

Each group's changes at the layer run one at a time (its own lock), and a stream is a member
before the layer's ``group_add`` is sent, so an event published once a stream's ``join`` has
returned always reaches it (the listen stream acknowledges only then; a GET stream re-reads its
session only then). Different groups change concurrently: with channels_redis the joins asked
for together go to Redis in one pipeline (``group_batches``), so a thousand sessions opening at
once are neither queued behind one another nor a round trip each. A layer that stays
unreachable ends every member's stream, as a stream's own reader used to, so clients reconnect;
after a failed read the worker joins every group it holds again as soon as the layer answers (a
restarted Redis has forgotten them), and it renews them now and then, because channels_redis drops a group member after its
``group_expiry`` (a day by default).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, Protocol

from ..fanout import NOTIFY
from ..hooks import Delivery, global_chains
from .group_batches import GroupBatches
from .layer_reading import PatientReader


logger = logging.getLogger("django_mcp.transports")

# How often the worker renews its memberships (channels_redis's group_expiry is a day by default).
RENEW_SECONDS = 3600.0


class Member(Protocol):
    """A stream that receives the events of the groups it joined."""

    def receive_shared(self, event: dict[str, Any]) -> None: ...

    def shared_groups_lost(self) -> None: ...


class _Group:
    """One group as this worker holds it: its local members, and whether the layer has the worker in it."""

    __slots__ = ("members", "joined", "lock")

    def __init__(self) -> None:
        self.members: set[Member] = set()
        # Set once the layer has confirmed the worker's group_add: a stream that finds it set may
        # count on hearing what is published from now on.
        self.joined = False
        self.lock = asyncio.Lock()


class SharedGroups:
    """This worker's one channel in the groups of one channel layer, on one event loop."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.batches = GroupBatches(layer)
        self.channel: str | None = None
        self.groups: dict[str, _Group] = {}
        self.opening = asyncio.Lock()
        self.tasks: list[asyncio.Task[Any]] = []
        self.rejoining: asyncio.Task[Any] | None = None

    def members(self, group: str) -> frozenset[Member]:
        """The streams of this worker in ``group`` now."""
        entry = self.groups.get(group)
        return frozenset(entry.members) if entry is not None else frozenset()

    def joined(self) -> set[str]:
        """The groups the layer has this worker's channel in."""
        return {name for name, entry in self.groups.items() if entry.joined}

    async def worker_channel(self) -> str:
        """The worker's channel, made (with its reader) on first need."""
        if self.channel is None:
            async with self.opening:
                if self.channel is None:
                    channel = await self.layer.new_channel()
                    loop = asyncio.get_running_loop()
                    self.tasks = [loop.create_task(self._read(channel)), loop.create_task(self._renew())]
                    self.channel = channel
        return self.channel

    async def join(self, group: str, member: Member) -> None:
        """Make ``member`` hear ``group``; the worker joins it at the layer if it is the first."""
        entry = self.groups.get(group)
        if entry is None:
            entry = self.groups[group] = _Group()
        # A member before the layer hears of it: what arrives meanwhile reaches it too.
        entry.members.add(member)
        if entry.joined:
            return  # the worker is in the group already: nothing to ask the layer
        try:
            async with entry.lock:
                if not entry.joined:
                    channel = await self.worker_channel()
                    await self.batches.add(group, channel)
                    entry.joined = True
        except BaseException:
            entry.members.discard(member)
            self._drop_if_empty(group, entry)
            raise

    async def leave(self, group: str, member: Member) -> None:
        """``member`` no longer hears ``group``; the worker leaves it at the layer after its last member."""
        entry = self.groups.get(group)
        if entry is None or member not in entry.members:
            return
        entry.members.discard(member)
        if entry.members:
            return
        async with entry.lock:
            if entry.members:
                return  # a stream joined while this one waited
            if entry.joined and self.channel is not None:
                entry.joined = False
                try:
                    await self.batches.discard(group, self.channel)
                except Exception:
                    logger.warning("Could not leave channel group %s", group, exc_info=True)
            self._drop_if_empty(group, entry)

    def _drop_if_empty(self, group: str, entry: _Group) -> None:
        # Only an entry nobody waits on and the layer does not hold: a join waiting for the lock
        # has added its member already, so it keeps the entry.
        if not entry.members and not entry.joined and self.groups.get(group) is entry:
            del self.groups[group]

    async def _read(self, channel: str) -> None:
        reader = PatientReader(self.layer, channel, on_trouble=self._rejoin_when_back)
        while (event := await reader.next()) is not None:
            entry = self.groups.get(event.get("group"))  # type: ignore[arg-type]
            if entry is not None:
                members = tuple(entry.members)
                chains = global_chains() if event.get("type") == NOTIFY else None
                if chains is not None and chains.around("deliver"):
                    try:
                        await chains.run(Delivery(event["group"], event, members, _hand_over))
                    except Exception:  # a hook's fault must not stop the reader either
                        logger.exception("A hook around delivering a %s event failed", event.get("type"))
                else:
                    hand_over(event, members)
        self._give_up()

    def _rejoin_when_back(self) -> None:
        """
        The layer failed a read: it may be a restarted Redis, which has forgotten the worker's
        memberships, so that nothing would ever reach the channel again. Join every group again
        as soon as the layer answers (not when an event arrives: none would).
        """
        if self.rejoining is None or self.rejoining.done():
            # Kept in self.tasks too: the loop holds only a weak reference to a task.
            self.rejoining = asyncio.get_running_loop().create_task(self._rejoin_until_done())
            self.tasks.append(self.rejoining)

    async def _rejoin_until_done(self) -> None:
        pause = 0.2
        while self.channel is not None and not await self._rejoin():
            await asyncio.sleep(pause)
            pause = min(pause * 2, 5.0)

    async def _rejoin(self) -> bool:
        """Join every group the worker holds again; whether the layer took every one."""
        done = await asyncio.gather(*(self._join_again(group, entry) for group, entry in tuple(self.groups.items())))
        return all(done)

    async def _join_again(self, group: str, entry: _Group) -> bool:
        async with entry.lock:
            if not entry.joined or self.channel is None:
                return True
            try:
                await self.batches.add(group, self.channel)
            except Exception:
                logger.warning("Could not join channel group %s again", group, exc_info=True)
                return False
            return True

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            await self._rejoin()

    def _give_up(self) -> None:
        """End every member's stream and start afresh: the next join opens a new channel."""
        members = {member for entry in self.groups.values() for member in entry.members}
        self.groups = {}
        self.channel = None
        for task in self.tasks:
            if task is not asyncio.current_task():
                task.cancel()
        self.tasks = []
        self.rejoining = None
        for member in members:
            member.shared_groups_lost()


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, SharedGroups]] = weakref.WeakKeyDictionary()


def hand_over(event: dict[str, Any], members: tuple[Member, ...]) -> None:
    """Give ``event`` to each stream of this worker in its group."""
    for member in members:
        try:
            member.receive_shared(event)
        except Exception:  # one stream's fault must not stop the reader of them all
            logger.exception("A stream could not take a %s event", event.get("type"))


def _hand_over(delivery: Delivery) -> None:
    hand_over(delivery.event, delivery.streams)


def shared_groups_for(layer: Any) -> SharedGroups:
    """The worker's :class:`SharedGroups` for ``layer`` on the running event loop (made on first need)."""
    per_layer = _by_loop.setdefault(asyncio.get_running_loop(), {})
    shared = per_layer.get(id(layer))
    if shared is None or shared.layer is not layer:
        shared = per_layer[id(layer)] = SharedGroups(layer)
    return shared
