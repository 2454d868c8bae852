"""
The default session store: sessions as rows of :class:`~django_mcp.models.McpSession`, and, with
signed session ids, the rows a worker owes for a second (stores/pending_rows.py) and the
tombstones of sessions ended while their ids could stand alone.
"""

import asyncio
import logging
import time
import weakref
from datetime import timedelta
from typing import Any

from django.core.signals import setting_changed
from django.db import DatabaseError, transaction
from django.utils import timezone

from ..conf import mcp_settings
from ..threads import in_database_thread
from . import session_ids, session_sql
from .pending_rows import RESCUE_AFTER, SIGNED_ONLY_SECONDS, WRITE_DELAY, PendingRows, owner
from .sessions import BaseSessionStore, SessionState, TooManySessions, TooManySubscriptions, new_session_id

logger = logging.getLogger("django_mcp.stores")

_instances: "weakref.WeakSet[DatabaseSessionStore]" = weakref.WeakSet()


class DatabaseSessionStore(BaseSessionStore):
    """
    Sessions as rows of :class:`~django_mcp.models.McpSession`; idle ones expire.

    With ``SIGNED_SESSION_IDS`` (the default) a Streamable HTTP session's id is signed and carries
    what the session is (stores/session_ids.py), so ``initialize`` writes nothing: the row follows
    within a second (stores/pending_rows.py). Until then other workers serve the session from its
    id; a session ended before then leaves a tombstone row, so that no worker takes the id for a
    live session any more. A single process (no channel layer, or the in-process one) takes an
    unwritten session only from its own memory: ended there, it is gone without a write.
    """

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self.pending = PendingRows(self._write_pending)
        _instances.add(self)

    def _model(self) -> Any:
        from ..models import McpSession

        return McpSession

    def _in_thread(self, fn: Any) -> Any:
        return in_database_thread(fn, self._model())

    def _idempotent_in_thread(self, fn: Any) -> Any:
        # Work that may run twice with the same effect (a read, setting fields to given values):
        # its own statement checks the connection (threads.in_database_thread), where a GET
        # stream's re-read paid a SELECT 1 before it.
        return in_database_thread(fn, self._model(), idempotent=True)

    def _state(self, row: Any, wire_id: str | None = None, issued_at: int | None = None) -> SessionState:
        return SessionState(id=row.id, protocol_version=row.protocol_version,
                            client_capabilities=row.client_capabilities or {}, client_info=row.client_info,
                            log_level=row.log_level, subscriptions=list(row.subscriptions or []),
                            user_key=row.user_key, transport=row.transport, stream_channel=row.stream_channel,
                            wire_id=wire_id, issued_at=issued_at)

    # Opening ---------------------------------------------------------------------------------

    async def create(self, *, protocol_version: str, client_capabilities: dict[str, Any],
                     client_info: dict[str, Any] | None, user_key: str,
                     transport: str = "streamable-http", client_address: str | None = None,
                     stream_channel: str = "", max_per_owner: int | None = None) -> SessionState:
        fields = dict(protocol_version=protocol_version, client_capabilities=client_capabilities,
                      client_info=client_info, user_key=user_key, transport=transport,
                      client_address=client_address if user_key == "anonymous" else None,
                      stream_channel=stream_channel)
        if mcp_settings.SIGNED_SESSION_IDS and transport == "streamable-http":
            key, issued_at = new_session_id(), int(time.time())
            wire_id = session_ids.sign(key, protocol_version=protocol_version, user_key=user_key,
                                       client_capabilities=client_capabilities, client_info=client_info,
                                       issued_at=issued_at)
            if wire_id is not None:
                return await self._create_signed(key, wire_id, issued_at, fields, max_per_owner)
        self.pending.bind()
        if max_per_owner is not None and await self._held_by(fields, max_per_owner) >= max_per_owner:
            raise TooManySessions()
        state = await self._idempotent_in_thread(self._create)(new_session_id(), fields)
        self.pending.count_written(owner(fields))
        return state

    async def _create_signed(self, key: str, wire_id: str, issued_at: int, fields: dict[str, Any],
                             max_per_owner: int | None) -> SessionState:
        self.pending.bind()
        if max_per_owner is not None and await self._held_by(fields, max_per_owner) >= max_per_owner:
            raise TooManySessions()
        state = _opened(key, fields, wire_id=wire_id, stored=False, issued_at=issued_at)
        self.pending.add(key, self._fields_of(state, fields["client_address"]), state)
        return state

    async def _held_by(self, fields: dict[str, Any], limit: int) -> int:
        """
        The principal's open sessions: its rows, read at most once per ``WRITE_DELAY`` (and again
        after this worker wrote some of its rows), plus those this worker has not written yet and
        those it wrote itself since. Another worker's sessions of the last ``WRITE_DELAY`` are not
        counted. Counting the rows on every open cost a statement each, and one that grew with
        the principal's sessions: thousands of HTTP+SSE clients reconnecting at once from one
        address (a proxy's) took quadratic time.
        """
        principal = owner(fields)
        now = time.monotonic()
        read = self.pending.rows_held.get(principal)
        if read is None or now - read[0] >= WRITE_DELAY:
            since = timezone.now() - timedelta(seconds=mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS)
            try:
                rows = await self._idempotent_in_thread(session_sql.count_held)(
                    self._model(), fields["user_key"], fields["client_address"], since, limit)
            except DatabaseError:
                # The database is away: the session is opened all the same (it needs no row yet),
                # counted against what this worker knows, its own unwritten sessions included.
                logger.warning("Could not count the open MCP sessions of %s", fields["user_key"], exc_info=True)
                return (read[1] if read is not None else 0) + self.pending.held_by(principal)
            if len(self.pending.rows_held) > 10_000:
                self.pending.rows_held.clear()
            read = self.pending.rows_held[principal] = (now, rows)
        return read[1] + self.pending.held_by(principal)

    def _create(self, session_id: str, fields: dict[str, Any]) -> SessionState:
        # The id is chosen before, and a row already under it left as it is: run again on a new
        # connection, after the first run's INSERT committed but its answer was lost, this writes
        # nothing more. (Two sessions given one id by chance would take 2^64 of them.)
        session_sql.insert_missing(self._model(), [{"id": session_id, **fields, "log_level": None,
                                                    "subscriptions": [], "ended": False}])
        return _opened(session_id, fields)

    async def _write_pending(self, rows: list[dict[str, Any]]) -> None:
        await self._in_thread(session_sql.write_batch)(self._model(), rows)
        for row in rows:
            self.pending.rows_held.pop(owner(row), None)

    async def flush(self) -> None:
        """Write every row this worker owes now (tests, and a worker about to stop)."""
        self.pending.bind()
        await self.pending.flush()

    async def persist(self, state: SessionState) -> bool:
        """
        Make sure the session has its row, before anything is stored that refers to it or changes
        it; False when it has ended meanwhile.
        """
        if state.stored:
            return True
        self.pending.bind()
        await self.pending.settled(state.id)
        owed = self.pending.take(state.id)
        if owed is None and not reaches_other_workers():
            # Alone, an unwritten session not owed any more has ended: its row exists or never will.
            alive = await self._in_thread(self._model().objects.filter(pk=state.id, ended=False).exists)()
            state.stored = alive
            return alive
        # Taken from what is owed and not yet in the table: a read meanwhile (a GET stream opening
        # while the client's logging/setLevel persists its session) waits for this insert instead
        # of finding no session at all.
        done = self.pending.mark_writing([state.id]) if owed is not None else None
        try:
            alive = await self._in_thread(session_sql.insert_unless_present)(
                self._model(), owed if owed is not None else self._fields_of(state))
        except Exception:
            if owed is not None:
                self.pending.add(state.id, owed, state)  # still owed: the batch writer tries again
            raise
        finally:
            if done is not None:
                self.pending.done_writing([state.id], done)
        state.stored = alive
        return alive

    def _fields_of(self, state: SessionState, client_address: str | None = None) -> dict[str, Any]:
        return {"id": state.id, "protocol_version": state.protocol_version,
                "client_capabilities": state.client_capabilities, "client_info": state.client_info,
                "user_key": state.user_key, "transport": state.transport, "client_address": client_address,
                "stream_channel": state.stream_channel, "log_level": state.log_level,
                "subscriptions": list(state.subscriptions), "ended": False}

    # Reading ---------------------------------------------------------------------------------

    async def get(self, session_id: str) -> SessionState | None:
        # Only on a miss of the worker's session cache (transports/session_cache.py).
        # An id whose signature does not verify (SECRET_KEY rotated without a fallback) still names
        # its row by its key, as a plain id does: only the facts it carries are not believed.
        facts = session_ids.read(session_id) if session_ids.is_signed(session_id) else None
        key = session_ids.key_of(session_id)
        self.pending.bind()
        # Alone, this worker opened every session there is: one without a row is one it still
        # owes, or one that has ended.
        alone = not reaches_other_workers()
        # A row the writer has taken but not yet committed is neither owed nor in the table: wait
        # for it, or a request right then (a GET stream opening) would find no session at all.
        await self.pending.settled(key)
        owed_before = key in self.pending.sessions
        state = await self._idempotent_in_thread(self._get)(key, session_id, None if alone else facts)
        if state is None and owed_before and key not in self.pending.sessions:
            # The batch writer took the row while this read ran, before its commit: read again
            # once the write is over, or a session this worker opened would look ended.
            await self.pending.settled(key)
            state = await self._idempotent_in_thread(self._get)(key, session_id, None if alone else facts)
        if state is ENDED:
            # A tombstone: another worker ended it before this one wrote its row; it never will.
            self.pending.take(key)
            return None
        if state is None:
            owed = self.pending.sessions.get(key)
            if owed is not None:
                state = owed[2]  # the session as this worker opened it, its row still owed
        return state

    def _get(self, key: str, wire_id: str, facts: session_ids.SignedFacts | None) -> Any:
        # Run again whole if its connection turns out lost: what it may write (an expired row's
        # delete, the minute's touch, a rescued row's insert) comes to the same the second time.
        model = self._model()
        row = session_sql.read(model, key)
        issued_at = facts.issued_at if facts is not None else None
        if row is None:
            return self._signed_only(facts, wire_id) if facts is not None else None
        if row.ended:
            return ENDED
        idle = timedelta(seconds=mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS)
        now = timezone.now()
        if row.last_seen_at < now - idle:
            state = self._state(row, wire_id, issued_at)  # before delete(), which clears the primary key
            state.expired = True
            row.delete()
            return state
        # Touch at most once a minute: keeps expiry honest without a write per request.
        if row.last_seen_at < now - timedelta(seconds=60):
            model.objects.filter(pk=key).update(last_seen_at=now)
        return self._state(row, wire_id, issued_at)

    def _signed_only(self, facts: session_ids.SignedFacts, wire_id: str) -> SessionState | None:
        """A signed session without a row: alive while its id is young enough to stand alone."""
        age = time.time() - facts.issued_at
        if age >= min(SIGNED_ONLY_SECONDS, mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS):
            return None
        state = SessionState(id=facts.key, protocol_version=facts.protocol_version,
                             client_capabilities=facts.client_capabilities, client_info=facts.client_info,
                             log_level=None, subscriptions=[], user_key=facts.user_key, wire_id=wire_id,
                             stored=False, issued_at=facts.issued_at)
        if age >= RESCUE_AFTER:
            # Its worker would have written the row by now: it stopped first. Write it here.
            state.stored = session_sql.insert_unless_present(self._model(), self._fields_of(state))
            if not state.stored:
                return None
        return state

    # Changing --------------------------------------------------------------------------------

    async def add_subscription(self, session_id: str, uri: str, *, limit: int | None = None) -> list[str]:
        async with self._lock(session_id):
            return await self._in_thread(self._change_subscriptions)(session_id, uri, True, limit)

    async def remove_subscription(self, session_id: str, uri: str) -> list[str]:
        async with self._lock(session_id):
            return await self._in_thread(self._change_subscriptions)(session_id, uri, False, None)

    def _lock(self, session_id: str) -> asyncio.Lock:
        # Row locks serialise workers on PostgreSQL; SQLite has none, so requests of one process
        # (the only writers a SQLite deployment has) also queue here.
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    def _change_subscriptions(self, session_id: str, uri: str, add: bool, limit: int | None) -> list[str]:
        model = self._model()
        with transaction.atomic():
            row = model.objects.select_for_update().filter(pk=session_id, ended=False).only("subscriptions").first()
            if row is None:
                return []
            current = list(row.subscriptions or [])
            if add and uri not in current:
                if limit is not None and len(current) >= limit:
                    raise TooManySubscriptions()
                current.append(uri)
            elif not add and uri in current:
                current.remove(uri)
            else:
                return current
            model.objects.filter(pk=session_id).update(subscriptions=current)
            return current

    async def update(self, session_id: str, **fields: Any) -> None:
        # Setting fields to given values may run twice (threads.in_database_thread's idempotent).
        await self._idempotent_in_thread(session_sql.update_live)(self._model(), session_id, fields)

    async def delete(self, session_id: str, *, issued_at: int | None = None) -> bool:
        self.pending.bind()
        await self.pending.settled(session_id)
        fields = self.pending.take(session_id)
        if fields is not None and not reaches_other_workers():
            return True  # never written, and no other worker can take its id for a live session
        self.pending.rows_held.clear()  # a principal's count just fell
        # Its events go with it, in the same transaction. While its signed id could still stand
        # for it alone on another worker, a tombstone stays in its place.
        young = issued_at is not None and time.time() - issued_at < SIGNED_ONLY_SECONDS and reaches_other_workers()
        tombstone = {**(fields or _row_known_by_key(session_id)), "ended": True} if young else None
        return await self._in_thread(session_sql.end)(self._model(), session_id, tombstone) or fields is not None

    async def touch(self, session_id: str) -> bool:
        updated = await self._in_thread(self._model().objects.filter(pk=session_id, ended=False).update)(
            last_seen_at=timezone.now())
        return updated > 0

    async def clear_expired(self) -> int:
        idle = timedelta(seconds=mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS)
        now = timezone.now()
        model = self._model()
        expired = model.objects.filter(last_seen_at__lt=now - idle, ended=False)
        # A tombstone is needed while the signed id it stands for could be taken for a live session.
        outlived = model.objects.filter(ended=True, created_at__lt=now - timedelta(seconds=2 * SIGNED_ONLY_SECONDS))

        def clear() -> int:
            outlived.delete()
            # Their events go with them (ON DELETE CASCADE); count sessions only.
            return expired.delete()[1].get(model._meta.label, 0)

        return await self._in_thread(clear)()


def _opened(key: str, fields: dict[str, Any], **more: Any) -> SessionState:
    """A session just opened with the ``create()`` fields ``fields``: no log level, no subscriptions yet."""
    return SessionState(id=key, protocol_version=fields["protocol_version"],
                        client_capabilities=fields["client_capabilities"] or {}, client_info=fields["client_info"],
                        log_level=None, subscriptions=[], user_key=fields["user_key"], transport=fields["transport"],
                        stream_channel=fields["stream_channel"], **more)


def _row_known_by_key(key: str) -> dict[str, Any]:
    """The fields of a row for a session this worker knows by its key only (to write its tombstone)."""
    return {"id": key, "protocol_version": "", "client_capabilities": {}, "client_info": None, "user_key": "",
            "transport": "streamable-http", "client_address": None, "stream_channel": "", "log_level": None,
            "subscriptions": []}


# What _get() finds where a session ended while it was young: unlike no row, it is final.
ENDED = object()


def reaches_other_workers() -> bool:
    """
    Whether another process may serve this worker's sessions: the configured channel layer joins
    processes, or the plain view expects several (:func:`django_mcp.fanout.expect_unconnected_workers`).
    """
    from channels.layers import get_channel_layer

    from ..fanout import alone

    return not alone(get_channel_layer())


def _forget_counts(**kwargs: Any) -> None:
    # Counts were read under the old settings (the limit bounds them, the idle timeout filters them).
    for store in _instances:
        store.pending.rows_held.clear()


setting_changed.connect(_forget_counts)
__all__ = ["DatabaseSessionStore", "reaches_other_workers"]
