"""
A per-worker cache of legacy sessions, so a session's POSTs do not each read the database.

What a session is — its negotiated version, client capabilities and info, the user it belongs to,
its transport — never changes after ``initialize``, so a copy in process memory stays right. What
does change (the log level, the subscriptions, whether the session still exists) is changed
through :func:`announce_change`: the worker that changes it forgets its copy and tells every
other worker, over the channel layer, to forget theirs. A copy is also re-read from the store
after ``SESSION_CACHE_SECONDS`` whatever happens, which bounds how long a lost announcement (a
channel-layer outage) can matter and keeps idle expiry and ``last_seen`` honest. Without a
channel layer nothing can be announced, so nothing is cached; nor with the in-process layer where
other processes serve the site too (the plain view's, :func:`django_mcp.fanout.expect_unconnected_workers`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from channels.layers import get_channel_layer
from django.core.signals import setting_changed

from ..conf import mcp_settings
from ..fanout import ROWS_CHANGED, SESSION_CHANGED, SESSIONS_GROUP, alone, layer_call, reaches_other_workers
from ..snapshots import snapshots
from ..stores.session_ids import key_of
from ..stores.sessions import SessionState
from .layer_reading import is_read_timeout


logger = logging.getLogger("django_mcp.sessions")

# channels_redis forgets group members after a day (its group_expiry): join again well before.
REJOIN_SECONDS = 3600.0


class SessionCache:
    """Sessions by id, least recently used first out, each with the time it was read."""

    def __init__(self) -> None:
        self.entries: OrderedDict[str, tuple[float, SessionState]] = OrderedDict()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.tasks: list[asyncio.Task[Any]] = []
        # The channel this worker hears announcements on; its own come back on it, and are
        # skipped: announce_change() has forgotten locally already, and what the worker put in
        # its cache after announcing (an HTTP+SSE session just initialized) is newer.
        self.channel: str | None = None

    def enabled(self) -> bool:
        # A copy is safe where every change is heard of: alone, or told by the other workers.
        layer = get_channel_layer()
        return mcp_settings.SESSION_CACHE_SECONDS > 0 and layer is not None and (
            reaches_other_workers(layer) or alone(layer))

    async def get(self, session_id: str, load: Callable[[str], Awaitable[SessionState | None]]
                  ) -> SessionState | None:
        """The session from memory if it was read recently enough, else from ``load`` (the store)."""
        if not self.enabled():
            return await load(session_id)
        self.bind_to_loop()
        # Kept by the session's key; a signed id must also match, byte for byte, the one that was
        # verified when the entry was made.
        key = key_of(session_id)
        entry = self.entries.get(key)
        if entry is not None and time.monotonic() - entry[0] < mcp_settings.SESSION_CACHE_SECONDS \
                and entry[1].wire_id == session_id:
            self.entries.move_to_end(key)
            return entry[1]
        state = await load(session_id)
        if state is None or state.expired:
            self.entries.pop(key, None)
        else:
            self.put(state)
        return state

    def put(self, state: SessionState) -> None:
        """Remember a session just created or read."""
        if not self.enabled():
            return
        self.bind_to_loop()
        self.entries[state.id] = (time.monotonic(), state)
        self.entries.move_to_end(state.id)
        while len(self.entries) > mcp_settings.SESSION_CACHE_SIZE:
            self.entries.popitem(last=False)

    def own_channel(self) -> str | None:
        """The channel this worker's listener hears announcements on, on the running loop; None before it listens."""
        try:
            return self.channel if self.loop is asyncio.get_running_loop() else None
        except RuntimeError:
            return None

    def forget(self, session_id: str) -> None:
        self.entries.pop(key_of(session_id), None)

    def clear(self) -> None:
        self.entries.clear()

    def bind_to_loop(self) -> None:
        """Listen for other workers' announcements on this event loop (once per loop)."""
        loop = asyncio.get_running_loop()
        if self.loop is loop:
            return
        # A new loop (tests run one per test) cannot trust what the old one heard, or did not hear.
        for task in self.tasks:
            task.cancel()
        self.clear()
        self.loop, self.channel = loop, None
        self.tasks = [loop.create_task(self.listen())]

    async def listen(self) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        channel = self.channel = await layer.new_channel()
        rejoin = asyncio.get_running_loop().create_task(self.keep_joined(layer, channel))
        self.tasks.append(rejoin)
        await rejoin_once(layer, channel)
        while True:
            try:
                event = await layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_read_timeout(exc):
                    # Nothing to hear for a while, not an outage (transports/layer_reading.py).
                    await asyncio.sleep(0.01)
                    continue
                # The layer is down: what we hold may be missing announcements, so hold nothing.
                logger.warning("Session announcements unavailable; not caching sessions for a while", exc_info=True)
                self.clear()
                snapshots.forget()
                await asyncio.sleep(1.0)
                # A restarted Redis has forgotten the group: join it again before trusting it.
                while not await rejoin_once(layer, channel):
                    self.clear()
                    await asyncio.sleep(1.0)
                continue
            if event.get("type") == SESSION_CHANGED:
                if event.get("from") == channel:
                    continue  # this worker's own (see ``channel``)
                # "sessions" from a batch; "session" alone from workers of earlier releases.
                for session_id in event.get("sessions") or [event.get("session", "")]:
                    self.forget(session_id)
            elif event.get("type") == ROWS_CHANGED:
                snapshots.forget()

    async def keep_joined(self, layer: Any, channel: str) -> None:
        while True:
            await asyncio.sleep(REJOIN_SECONDS)
            await rejoin_once(layer, channel)


async def rejoin_once(layer: Any, channel: str) -> bool:
    """Join the announcement group (again); whether the layer took it."""
    try:
        await layer.group_add(SESSIONS_GROUP, channel)
    except Exception:
        logger.warning("Could not join %s", SESSIONS_GROUP, exc_info=True)
        return False
    return True


session_cache = SessionCache()


async def announce_change(session_id: str) -> None:
    """
    A session changed or ended: forget it here, and tell every other worker to forget it. Returns
    once the announcement is sent (with others made meanwhile: see :class:`ChangeAnnouncer`).
    """
    session_cache.forget(session_id)
    layer = get_channel_layer()
    if reaches_other_workers(layer) and mcp_settings.SESSION_CACHE_SECONDS > 0:
        await ChangeAnnouncer.for_loop().announce(layer, session_id)


class ChangeAnnouncer:
    """
    Sends a worker's session-change announcements in batches: while one is on its way, the
    sessions that change meanwhile wait and go together in the next. Alone, a change goes at once;
    when thousands of sessions end together (clients leaving at a deploy, a benchmark's end), each
    worker's listener reads a few dozen messages instead of thousands — its channel holds only
    ``capacity`` messages (channels_redis: 100 by default), and what a group send finds full is
    dropped, leaving other workers serving a copy of an ended session until it is re-read.
    """

    #: Sessions named in one message at most (about 40 bytes each).
    BATCH_SIZE = 500
    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ChangeAnnouncer] = weakref.WeakKeyDictionary()

    def __init__(self) -> None:
        self.waiting: list[tuple[str, asyncio.Future[None]]] = []
        self.sender: asyncio.Task[None] | None = None

    @classmethod
    def for_loop(cls) -> ChangeAnnouncer:
        loop = asyncio.get_running_loop()
        announcer = cls._by_loop.get(loop)
        if announcer is None:
            announcer = cls._by_loop[loop] = cls()
        return announcer

    async def announce(self, layer: Any, session_id: str) -> None:
        loop = asyncio.get_running_loop()
        sent: asyncio.Future[None] = loop.create_future()
        self.waiting.append((session_id, sent))
        if self.sender is None:
            self.sender = loop.create_task(self._send_all(layer))
        await sent

    async def _send_all(self, layer: Any) -> None:
        try:
            while self.waiting:
                batch, self.waiting = self.waiting[:self.BATCH_SIZE], self.waiting[self.BATCH_SIZE:]
                sessions = list(dict.fromkeys(session_id for session_id, _ in batch))
                try:
                    announcement = {"type": SESSION_CHANGED, "sessions": sessions}
                    origin = session_cache.own_channel()
                    if origin is not None:
                        announcement["from"] = origin
                    await layer_call(layer.group_send, SESSIONS_GROUP, announcement)
                except Exception as exc:
                    for _, sent in batch:
                        if not sent.done():
                            sent.set_exception(exc)
                    continue
                for _, sent in batch:
                    if not sent.done():
                        sent.set_result(None)
        finally:
            self.sender = None


# The row snapshots hear their announcements through this module's listener (snapshots.py).
snapshots.start_listening = session_cache.bind_to_loop


def _forget_everything(**kwargs: Any) -> None:
    session_cache.clear()
    snapshots.forget()


setting_changed.connect(_forget_everything)
