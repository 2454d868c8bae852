"""
Legacy session state behind a small store interface (docs/architecture.md, "Many workers"). The
default store keeps sessions in the database; another store can be named by the
``SESSION_STORE`` setting. A store only stores: announcing a change to other workers is the
caller's job (``django_mcp.transports.http_sessions``).
"""

import asyncio
import secrets
import weakref
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..conf import mcp_settings
from ..threads import in_database_thread
from . import session_sql


def new_session_id() -> str:
    """128 random bits as hex: visible ASCII only, as the spec requires (MCP spec 2025-11-25, basic/transports#streamable-http)."""
    return secrets.token_hex(16)


def user_key(user: Any) -> str:
    """A stable key for the principal a session belongs to."""
    if user is None or not getattr(user, "is_authenticated", False):
        return "anonymous"
    return f"user:{user.pk}"


class SessionState:
    """
    A loaded session, as a plain record. ``expired`` is True when the store found it idle past
    ``SESSION_IDLE_TIMEOUT_SECONDS`` and removed it: the caller treats it as gone, and tells the
    session's streams and requests on every worker.
    """

    def __init__(self, *, id: str, protocol_version: str, client_capabilities: dict[str, Any],
                 client_info: dict[str, Any] | None, log_level: str | None, subscriptions: list[str], user_key: str,
                 transport: str = "streamable-http", expired: bool = False, stream_channel: str = "") -> None:
        self.id = id
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.log_level = log_level
        self.subscriptions = subscriptions
        self.user_key = user_key
        self.transport = transport
        self.expired = expired
        self.stream_channel = stream_channel


class TooManySessions(Exception):
    """The principal already holds ``DJANGO_MCP["MAX_SESSIONS_PER_USER"]`` open sessions."""


class TooManySubscriptions(Exception):
    """The session already holds ``DJANGO_MCP["MAX_SUBSCRIPTIONS"]`` resource subscriptions."""


class BaseSessionStore:
    """Create, load, update and end legacy sessions."""

    async def create(self, *, protocol_version: str, client_capabilities: dict[str, Any],
                     client_info: dict[str, Any] | None, user_key: str,
                     transport: str = "streamable-http", client_address: str | None = None,
                     stream_channel: str = "", max_per_owner: int | None = None) -> SessionState:
        """
        A new session. With ``max_per_owner``, raise :class:`TooManySessions` when the principal
        (``user_key``, and ``client_address`` for anonymous clients) already has that many.
        """
        raise NotImplementedError(".create() must be overridden.")

    async def add_subscription(self, session_id: str, uri: str, *, limit: int | None = None) -> list[str]:
        """
        Add one URI to the session's subscriptions atomically (concurrent calls must not lose each
        other's); the subscriptions after it. :class:`TooManySubscriptions` past ``limit``.
        """
        raise NotImplementedError(".add_subscription() must be overridden.")

    async def remove_subscription(self, session_id: str, uri: str) -> list[str]:
        """Remove one URI atomically; the subscriptions after it."""
        raise NotImplementedError(".remove_subscription() must be overridden.")

    async def get(self, session_id: str) -> SessionState | None:
        raise NotImplementedError(".get() must be overridden.")

    async def update(self, session_id: str, **fields: Any) -> None:
        raise NotImplementedError(".update() must be overridden.")

    async def delete(self, session_id: str) -> bool:
        raise NotImplementedError(".delete() must be overridden.")

    async def touch(self, session_id: str) -> bool:
        """Mark a session as in use (an open stream); False when it no longer exists."""
        raise NotImplementedError(".touch() must be overridden.")

    async def clear_expired(self) -> int:
        """Remove sessions idle past ``SESSION_IDLE_TIMEOUT_SECONDS``; the number removed."""
        raise NotImplementedError(".clear_expired() must be overridden.")


class DatabaseSessionStore(BaseSessionStore):
    """Sessions as rows of :class:`~django_mcp.models.McpSession`; idle ones expire."""

    def _model(self) -> Any:
        from ..models import McpSession

        return McpSession

    def _in_thread(self, fn: Any) -> Any:
        return in_database_thread(fn, self._model())

    def _state(self, row: Any) -> SessionState:
        return SessionState(id=row.id, protocol_version=row.protocol_version,
                            client_capabilities=row.client_capabilities or {}, client_info=row.client_info,
                            log_level=row.log_level, subscriptions=list(row.subscriptions or []),
                            user_key=row.user_key, transport=row.transport, stream_channel=row.stream_channel)

    async def create(self, *, protocol_version: str, client_capabilities: dict[str, Any],
                     client_info: dict[str, Any] | None, user_key: str,
                     transport: str = "streamable-http", client_address: str | None = None,
                     stream_channel: str = "", max_per_owner: int | None = None) -> SessionState:
        fields = dict(protocol_version=protocol_version, client_capabilities=client_capabilities,
                      client_info=client_info, user_key=user_key, transport=transport,
                      client_address=client_address if user_key == "anonymous" else None,
                      stream_channel=stream_channel)
        return await self._in_thread(self._create)(fields, max_per_owner)

    def _create(self, fields: dict[str, Any], max_per_owner: int | None) -> SessionState:
        model = self._model()
        now = timezone.now()
        if max_per_owner is not None:
            # Expired sessions do not count: a client that left many behind is not locked out.
            since = now - timedelta(seconds=mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS)
            if session_sql.count_held(model, fields["user_key"], fields["client_address"], since,
                                      max_per_owner) >= max_per_owner:
                raise TooManySessions()
        session_id = new_session_id()
        session_sql.insert(model, {"id": session_id, **fields, "log_level": None, "subscriptions": [],
                                   "created_at": now, "last_seen_at": now})
        return SessionState(id=session_id, protocol_version=fields["protocol_version"],
                            client_capabilities=fields["client_capabilities"] or {},
                            client_info=fields["client_info"], log_level=None, subscriptions=[],
                            user_key=fields["user_key"], transport=fields["transport"],
                            stream_channel=fields["stream_channel"])

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
            row = model.objects.select_for_update().filter(pk=session_id).only("subscriptions").first()
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

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def get(self, session_id: str) -> SessionState | None:
        # Only on a miss of the worker's session cache (transports/session_cache.py).
        return await self._in_thread(self._get)(session_id)

    def _get(self, session_id: str) -> SessionState | None:
        model = self._model()
        row = model.objects.filter(pk=session_id).first()
        if row is None:
            return None
        idle = timedelta(seconds=mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS)
        now = timezone.now()
        if row.last_seen_at < now - idle:
            state = self._state(row)  # before delete(), which clears the primary key
            state.expired = True
            row.delete()
            return state
        # Touch at most once a minute: keeps expiry honest without a write per request.
        if row.last_seen_at < now - timedelta(seconds=60):
            model.objects.filter(pk=session_id).update(last_seen_at=now)
        return self._state(row)

    async def update(self, session_id: str, **fields: Any) -> None:
        await self._in_thread(self._model().objects.filter(pk=session_id).update)(**fields)

    async def delete(self, session_id: str) -> bool:
        # Its events go with it, in the same transaction.
        return await self._in_thread(session_sql.delete)(self._model(), session_id)

    async def touch(self, session_id: str) -> bool:
        updated = await self._in_thread(self._model().objects.filter(pk=session_id).update)(
            last_seen_at=timezone.now())
        return updated > 0

    async def clear_expired(self) -> int:
        idle = timedelta(seconds=mcp_settings.SESSION_IDLE_TIMEOUT_SECONDS)
        expired = self._model().objects.filter(last_seen_at__lt=timezone.now() - idle)
        # Their events go with them (ON DELETE CASCADE); count sessions only.
        return await self._in_thread(lambda: expired.delete()[1].get(self._model()._meta.label, 0))()


def get_session_store() -> BaseSessionStore:
    """The configured store (``DJANGO_MCP["SESSION_STORE"]``), one instance per class."""
    store_class = mcp_settings.SESSION_STORE
    instance = _stores.get(store_class)
    if instance is None:
        instance = _stores[store_class] = store_class()
    return instance


_stores: dict[type, BaseSessionStore] = {}
__all__ = ["BaseSessionStore", "DatabaseSessionStore", "SessionState", "TooManySessions", "TooManySubscriptions",
           "get_session_store"]
