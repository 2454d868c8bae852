"""
Legacy sessions as the transports use them: loading one (from this worker's cache or the store),
changing it (stored, then announced to every worker over the channel layer), and ending it.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from django.db import DatabaseError

from ..conf import mcp_settings
from ..fanout import SUBSCRIBE, announce_session_end, publish_to_session
from ..protocol.errors import InvalidParams
from ..signals import session_ended, tell
from ..stores.pending_rows import RESCUE_AFTER
from ..stores import session_ids
from ..stores.sessions import SessionState, TooManySubscriptions, get_session_store
from .session_cache import announce_change, session_cache

logger = logging.getLogger("django_mcp.sessions")


async def end_session(session: LiveSession) -> None:
    """Delete a session and tell every worker: its streams end and its requests are cancelled."""
    await _end_everywhere(session.id, session.issued_at, protocol_version=session.protocol_version,
                          transport=session.transport, started_at=_started_at(session.state))


async def end_stored_session(key: str, created_at: datetime) -> None:
    """
    End a session known by its row alone (staff deleting it in the admin), as :func:`end_session`
    does: on every worker at once, its id refused from then on even while it is young enough to
    stand alone (stores/pending_rows.py), its streams closed and its requests cancelled.
    """
    await _end_everywhere(key, int(created_at.timestamp()))


async def _end_everywhere(key: str, issued_at: int | None, *, protocol_version: str | None = None,
                          transport: str | None = None, started_at: int | None = None) -> None:
    await get_session_store().delete(key, issued_at=issued_at)
    await announce_change(key)
    await announce_session_end(key)
    tell(session_ended, session_id=key, started_at=started_at if started_at is not None else issued_at,
         protocol_version=protocol_version, transport=transport)


def _started_at(state: SessionState) -> int | None:
    """When a session began: the time its signed id was issued (a plain id does not say)."""
    if state.issued_at is not None:
        return state.issued_at
    facts = session_ids.read(state.wire_id) if session_ids.is_signed(state.wire_id) else None
    return facts.issued_at if facts is not None else None


class LiveSession:
    """
    A loaded session as the protocol layer uses it (``LegacySession``): reads come from the stored
    record; each change is stored, then announced on the channel layer, because the session's GET
    stream may be held by another worker.
    """

    __slots__ = ("state",)

    def __init__(self, state: SessionState) -> None:
        self.state = state

    # The record's fields, read on every request of the session: properties, because a
    # __getattr__ fallback pays for a failed lookup (and its AttributeError) on each read.
    id = property(lambda self: self.state.id)
    protocol_version = property(lambda self: self.state.protocol_version)
    client_capabilities = property(lambda self: self.state.client_capabilities)
    client_info = property(lambda self: self.state.client_info)
    log_level = property(lambda self: self.state.log_level)
    subscriptions = property(lambda self: self.state.subscriptions)
    user_key = property(lambda self: self.state.user_key)
    transport = property(lambda self: self.state.transport)
    expired = property(lambda self: self.state.expired)
    stream_channel = property(lambda self: self.state.stream_channel)
    wire_id = property(lambda self: self.state.wire_id)
    issued_at = property(lambda self: self.state.issued_at)

    def __getattr__(self, name: str) -> Any:
        # Anything else a store's record carries.
        return getattr(self.state, name)

    async def persist(self) -> bool:
        """Make sure the session has its row (stores/pending_rows.py); False once it has ended."""
        return await get_session_store().persist(self.state)

    async def set_log_level(self, level: str) -> None:
        self.state.log_level = level
        await self.persist()
        await get_session_store().update(self.state.id, log_level=level)
        await announce_change(self.state.id)

    async def subscribe(self, uri: str) -> None:
        """
        Subscribe to ``uri``. The store adds it atomically: concurrent ``resources/subscribe`` calls
        of one session, on any workers, keep each other's subscriptions.
        """
        await self.persist()
        try:
            subscriptions = await get_session_store().add_subscription(
                self.state.id, uri, limit=mcp_settings.MAX_SUBSCRIPTIONS)
        except TooManySubscriptions:
            raise InvalidParams(f"Too many subscriptions: a session may hold {mcp_settings.MAX_SUBSCRIPTIONS}; "
                                "unsubscribe from some first") from None
        if subscriptions != self.state.subscriptions:
            self.state.subscriptions = subscriptions
            await announce_change(self.state.id)
        await publish_to_session(self.state.id, {"type": SUBSCRIBE, "uri": uri, "subscribe": True})

    async def unsubscribe(self, uri: str) -> None:
        await self.persist()
        subscriptions = await get_session_store().remove_subscription(self.state.id, uri)
        if subscriptions != self.state.subscriptions:
            self.state.subscriptions = subscriptions
            await announce_change(self.state.id)
        await publish_to_session(self.state.id, {"type": SUBSCRIBE, "uri": uri, "subscribe": False})


async def load_live_session(session_id: str) -> LiveSession | None:
    """
    The session, from this worker's cache or the store, or None; one that just expired is
    announced as ended on every worker.
    """
    state = await _alive(await session_cache.get(session_id, get_session_store().get))
    if state is not None and not state.stored and state.issued_at is not None \
            and time.time() - state.issued_at >= RESCUE_AFTER:
        state = await _rescue(state)
    return None if state is None else LiveSession(state)


async def _rescue(state: SessionState) -> SessionState | None:
    """
    A session this worker serves from its cache still has no row after ``RESCUE_AFTER``: the
    worker that opened it stopped before writing it (or the database was away). Write it now,
    before its signed id stops standing for it alone; with the database away, serve on and try
    again on the next request. None: what the session has is a tombstone, it has ended.
    """
    try:
        alive = await get_session_store().persist(state)
    except DatabaseError:
        logger.info("Could not yet write the row of session %s", state.id, exc_info=True)
        return state
    if not alive:
        session_cache.forget(state.id)
        return None
    return state


async def reread_session(session_id: str) -> SessionState | None:
    """
    The session as the store has it now, never this worker's copy; None once it has ended.
    ``session_id`` as the client sent it (a signed id, or a plain one).
    """
    return await _alive(await get_session_store().get(session_id))


async def _alive(state: SessionState | None) -> SessionState | None:
    if state is None:
        return None
    if state.expired:
        # Its streams, on whichever worker, end too: a client must not be left listening.
        await announce_change(state.id)
        await announce_session_end(state.id)
        return None
    return state


__all__ = ["LiveSession", "end_session", "end_stored_session", "load_live_session", "reread_session"]
