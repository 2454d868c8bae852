"""
Legacy session state behind a small store interface (docs/architecture.md, "Many workers"). The
default store keeps sessions in the database (stores/database_sessions.py); another store can be
named by the ``SESSION_STORE`` setting. A store only stores: announcing a change to other workers is the
caller's job (``django_mcp.transports.http_sessions``).
"""

import secrets
from typing import Any

from ..conf import mcp_settings


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
    A loaded session, as a plain record. ``id`` is its key inside the server; ``wire_id`` what the
    client sends as ``Mcp-Session-Id``. ``expired`` is True when the store found it idle past
    ``SESSION_IDLE_TIMEOUT_SECONDS`` and removed it: the caller treats it as gone, and tells the
    session's streams and requests on every worker.
    """

    def __init__(self, *, id: str, protocol_version: str, client_capabilities: dict[str, Any],
                 client_info: dict[str, Any] | None, log_level: str | None, subscriptions: list[str], user_key: str,
                 transport: str = "streamable-http", expired: bool = False, stream_channel: str = "",
                 wire_id: str | None = None, stored: bool = True, issued_at: int | None = None) -> None:
        self.id = id
        # What the client names the session by: ``id`` itself, or a signed id whose key is ``id``
        # (stores/session_ids.py).
        self.wire_id = wire_id or id
        # False while the session lives in its signed id only, its row not yet written.
        self.stored = stored
        # When a signed id was issued (seconds since the epoch); None for a plain id.
        self.issued_at = issued_at
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

    async def delete(self, session_id: str, *, issued_at: int | None = None) -> bool:
        """End a session (``issued_at``: when its signed id was issued, if it has one)."""
        raise NotImplementedError(".delete() must be overridden.")

    async def persist(self, state: SessionState) -> bool:
        """
        Make sure the session is stored before something refers to it (a stream's events, a
        subscription); False when it has ended. A store that stores on ``create`` has nothing to do.
        """
        return True

    async def flush(self) -> None:
        """Store now whatever the store has put off."""

    async def touch(self, session_id: str) -> bool:
        """Mark a session as in use (an open stream); False when it no longer exists."""
        raise NotImplementedError(".touch() must be overridden.")

    async def clear_expired(self) -> int:
        """Remove sessions idle past ``SESSION_IDLE_TIMEOUT_SECONDS``; the number removed."""
        raise NotImplementedError(".clear_expired() must be overridden.")


def get_session_store() -> BaseSessionStore:
    """The configured store (``DJANGO_MCP["SESSION_STORE"]``), one instance per class."""
    store_class = mcp_settings.SESSION_STORE
    instance = _stores.get(store_class)
    if instance is None:
        instance = _stores[store_class] = store_class()
    return instance


_stores: dict[type, BaseSessionStore] = {}


__all__ = ["BaseSessionStore", "SessionState", "TooManySessions", "TooManySubscriptions", "get_session_store"]
