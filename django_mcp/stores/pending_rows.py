"""
Session rows a worker owes the database: sessions it opened with a signed id, written a moment
later in one batch.

A session that opens and ends within ``WRITE_DELAY`` on one worker — a client that connects for
one task — costs the database nothing where it cost an insert and a delete on its requests' path.
One that lives longer gets its row within ``WRITE_DELAY``, long before its signed id alone stops
being enough for other workers (``SIGNED_ONLY_SECONDS``), so idle expiry, subscriptions and the
admin work from rows as before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger("django_mcp.stores")

# Seconds a new session's row waits, so sessions that end sooner never write one.
WRITE_DELAY = 1.0
# Seconds a signed id stands for a live session without a row: the row of every session that
# lives longer is written by then (by the worker that opened it, or by the first worker to serve
# it after RESCUE_AFTER when that one is gone), and a tombstone need not outlive it.
SIGNED_ONLY_SECONDS = 60
# A session older than this that has no row was opened by a worker that did not write it (it
# stopped): the next worker to serve the session writes the row.
RESCUE_AFTER = 5


class PendingRows:
    """
    The rows this worker owes the database, and what it counts of them per principal. Lives on
    one event loop: a new loop (tests run one each) starts empty, because what the old one owed
    belonged to another database transaction.
    """

    def __init__(self, write: Callable[[list[dict[str, Any]]], Awaitable[None]]) -> None:
        self.write = write
        # key → (monotonic time opened, the row's fields, the session as its requests hold it)
        self.sessions: dict[str, tuple[float, dict[str, Any], Any]] = {}
        self.per_owner: Counter[tuple[str, str | None]] = Counter()
        # (user_key, client_address) → (monotonic time read, their rows then): see
        # DatabaseSessionStore._held_by()
        self.rows_held: dict[tuple[str, str | None], tuple[float, int]] = {}
        # keys being written right now (by the batch or by persist()), each with the event its
        # write sets when it is over; and the lock batch writes hold
        self.writing: dict[str, asyncio.Event] = {}
        self.lock: asyncio.Lock | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None

    def bind(self) -> None:
        """Start the writer on the running loop (once per loop)."""
        loop = asyncio.get_running_loop()
        if self.loop is loop:
            return
        if self.task is not None:
            self.task.cancel()
        self.sessions.clear()
        self.per_owner.clear()
        self.writing.clear()
        self.rows_held.clear()
        self.loop, self.lock = loop, asyncio.Lock()
        self.task = loop.create_task(self.run())

    def add(self, key: str, fields: dict[str, Any], state: Any) -> None:
        """Owe the row ``fields`` of the session ``state`` (a ``SessionState``, marked stored once written)."""
        self.sessions[key] = (time.monotonic(), fields, state)
        self.per_owner[owner(fields)] += 1

    def take(self, key: str) -> dict[str, Any] | None:
        """Remove and return a session not yet written."""
        entry = self.sessions.pop(key, None)
        if entry is None:
            return None
        self._uncount(entry[1])
        return entry[1]

    def held_by(self, owner_key: tuple[str, str | None]) -> int:
        return self.per_owner.get(owner_key, 0)

    def count_written(self, owner_key: tuple[str, str | None]) -> None:
        """One more row of ``owner_key``'s, written just now by this worker: its last count read grows by one."""
        read = self.rows_held.get(owner_key)
        if read is not None:
            self.rows_held[owner_key] = (read[0], read[1] + 1)

    def _uncount(self, fields: dict[str, Any]) -> None:
        principal = owner(fields)
        self.per_owner[principal] -= 1
        if self.per_owner[principal] <= 0:
            del self.per_owner[principal]

    async def run(self) -> None:
        while True:
            await asyncio.sleep(WRITE_DELAY / 2)
            await self.flush(older_than=WRITE_DELAY)

    async def flush(self, older_than: float = 0.0) -> None:
        """Write the sessions opened more than ``older_than`` seconds ago."""
        now = time.monotonic()
        due = [entry for entry in self.sessions.values() if now - entry[0] >= older_than]
        if not due:
            return
        for _, fields, _ in due:
            self.take(fields["id"])
        rows = [fields for _, fields, _ in due]
        ids = {row["id"] for row in rows}
        assert self.lock is not None
        # Marked as being written before waiting for the lock: these rows are no longer owed, so
        # a persist() or a read meanwhile (a GET stream opening) must wait for this write, not
        # find no row and take the session for ended.
        done = self.mark_writing(ids)
        try:
            async with self.lock:
                try:
                    await self.write(rows)
                except Exception:
                    # The database is away: keep what is owed and try again on the next round.
                    logger.warning("Could not write %d MCP session rows; will retry", len(rows), exc_info=True)
                    for _, fields, state in due:
                        self.add(fields["id"], fields, state)
                else:
                    for _, _, state in due:
                        state.stored = True
        finally:
            self.done_writing(ids, done)

    def mark_writing(self, keys: set[str] | list[str]) -> asyncio.Event:
        """
        ``keys``, taken from what is owed, are being written: until :meth:`done_writing`, a read
        that finds neither the row nor the debt waits for the write (:meth:`settled`). Call it
        right after :meth:`take`, with no ``await`` between.
        """
        done = asyncio.Event()
        for key in keys:
            self.writing[key] = done
        return done

    def done_writing(self, keys: set[str] | list[str], done: asyncio.Event) -> None:
        """The write :meth:`mark_writing` announced is over (committed, or failed and owed again)."""
        for key in keys:
            if self.writing.get(key) is done:
                del self.writing[key]
        done.set()

    async def settled(self, key: str) -> None:
        """Wait until a write of ``key`` that has started (or waits for the lock to start) is over."""
        while (done := self.writing.get(key)) is not None:
            await done.wait()


def owner(fields: dict[str, Any]) -> tuple[str, str | None]:
    return fields["user_key"], fields.get("client_address")


__all__ = ["PendingRows", "RESCUE_AFTER", "SIGNED_ONLY_SECONDS", "WRITE_DELAY"]
