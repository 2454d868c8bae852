"""
Per-worker snapshots of rows staff edit in the admin (the tool admin's rows, the query tools
defined there, anything a feature app keeps the same way), and the announcement that makes every
worker read them again.

A worker reads such rows once and serves requests from what it read: a listing must not query
the database for every tool it lists. When a row changes, :func:`announce_rows_changed` forgets
every snapshot here and tells every other worker, over the channel layer, to forget theirs; they
read again on their next request. A snapshot is also read again once older than
``TOOL_POLICY_CACHE_SECONDS``, whatever happens, which bounds how long a lost announcement (a
channel-layer outage) can matter.

The announcements travel with the session announcements (:mod:`django_mcp.transports.session_cache`
listens for both); that module starts its listener through :attr:`RowSnapshots.start_listening`
before any snapshot is read, so no announcement falls between a read and the listening.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from channels.layers import get_channel_layer

from .conf import mcp_settings
from .fanout import ROWS_CHANGED, SESSIONS_GROUP, reaches_other_workers


T = TypeVar("T")


class RowSnapshots:
    """What ``load()`` returned, per key, until the rows change (see the module docstring)."""

    def __init__(self) -> None:
        self.snapshots: dict[Any, tuple[float, Any]] = {}
        # One read of a snapshot at a time, whoever asks: without it, every request in flight
        # when a snapshot goes stale queues its own read (benchmarks/tool_admin.py).
        self.reading: dict[Any, asyncio.Future[Any]] = {}
        #: Bumped by :meth:`forget`: a read that started before it is stale when it ends.
        self.generation = 0
        #: Starts this worker's listener for announcements on the running loop (set by
        #: ``transports.session_cache``, which owns the listener); None: nothing to start.
        self.start_listening: Callable[[], None] | None = None

    async def snapshot(self, key: Any, load: Callable[[], Awaitable[T]]) -> T:
        """
        What ``load()`` returned, kept under ``key`` until the rows change, and read again once
        older than ``TOOL_POLICY_CACHE_SECONDS``, the safety net for a lost announcement.
        """
        snapshot = self.snapshots.get(key)
        if snapshot is not None:
            if time.monotonic() - snapshot[0] >= mcp_settings.TOOL_POLICY_CACHE_SECONDS:
                # Only the safety net expired: serve what we have while one read refreshes it in
                # the background.
                self._read(key, load)
            return snapshot[1]
        return await asyncio.shield(self._read(key, load))

    def _read(self, key: Any, load: Callable[[], Awaitable[Any]]) -> asyncio.Future[Any]:
        reading = self.reading.get(key)
        if reading is None or reading.get_loop() is not asyncio.get_running_loop():
            reading = self.reading[key] = asyncio.ensure_future(self._load(key, load))
        return reading

    async def _load(self, key: Any, load: Callable[[], Awaitable[Any]]) -> Any:
        # Listen for other workers' announcements before reading, so none is missed in between.
        if self.start_listening is not None:
            self.start_listening()
        generation = self.generation
        try:
            value = await load()
        finally:
            if self.reading.get(key) is asyncio.current_task():  # not a newer read started after forget()
                self.reading.pop(key, None)  # forget() may run on another thread (an admin save)
        if generation == self.generation:  # an announcement during the read makes it stale already
            self.snapshots[key] = (time.monotonic(), value)
        return value

    def last(self, key: Any) -> Any:
        """The value last read under ``key`` (even a stale one), or None."""
        snapshot = self.snapshots.get(key)
        return None if snapshot is None else snapshot[1]

    def forget(self) -> None:
        """Read every snapshot again on its next use."""
        self.snapshots.clear()
        self.reading.clear()
        self.generation += 1


snapshots = RowSnapshots()


async def announce_rows_changed() -> None:
    """Rows staff edit changed: every worker, this one included, reads them again on its next request."""
    snapshots.forget()
    layer = get_channel_layer()
    if reaches_other_workers(layer):
        await layer.group_send(SESSIONS_GROUP, {"type": ROWS_CHANGED})
