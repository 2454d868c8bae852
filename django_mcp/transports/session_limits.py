"""
What one client may make a worker hold, enforced where sessions and their streams are opened:
sessions per principal, the client state a session remembers, GET streams per session and
server→client requests outstanding per session (``DJANGO_MCP["MAX_*"]``). The limits sit far above
what a legitimate client needs; past them the request is refused with a clear error and nothing
is stored.
"""

from collections import Counter
from typing import Any

from ..conf import mcp_settings
from ..protocol import jsonrpc
from ..protocol.errors import InvalidParams, McpError
from ..signals import session_started, tell
from ..stores.sessions import SessionState, TooManySessions, get_session_store, user_key
from ..stores.sweep import sweep_now_and_then
from .refusals import LimitExceeded
from .stream_counts import count_streams


# Session id → open GET streams of it on this worker.
open_streams: Counter[str] = Counter()
count_streams("session", lambda: sum(open_streams.values()))


def client_address(scope: dict[str, Any]) -> str | None:
    """The peer's IP address as the server saw it (behind a proxy: as the proxy headers gave it)."""
    client = scope.get("client")
    return client[0] if client else None


def check_client_state(client_capabilities: dict[str, Any], client_info: dict[str, Any] | None) -> None:
    """
    Refuse an ``initialize`` whose capabilities and client info would make a large session row:
    the session stores them for its lifetime, so a client cannot be allowed to pick their size.
    """
    size = len(jsonrpc.encode([client_capabilities, client_info]))
    if size > mcp_settings.MAX_CLIENT_STATE_SIZE:
        raise InvalidParams(f"initialize: clientInfo and capabilities take {size} bytes; at most "
                            f"{mcp_settings.MAX_CLIENT_STATE_SIZE} are accepted")


async def open_session(scope: dict[str, Any], user: Any, *, transport: str, protocol_version: str,
                       client_capabilities: dict[str, Any], client_info: dict[str, Any] | None,
                       stream_channel: str = "") -> SessionState:
    """Create a session within the per-principal limit (None: no limit); :class:`LimitExceeded` past it."""
    sweep_now_and_then()
    limit = mcp_settings.MAX_SESSIONS_PER_USER
    try:
        state = await get_session_store().create(
            protocol_version=protocol_version, client_capabilities=client_capabilities, client_info=client_info,
            user_key=user_key(user), transport=transport, client_address=client_address(scope),
            stream_channel=stream_channel, max_per_owner=limit)
    except TooManySessions:
        raise LimitExceeded(f"Too many open sessions: at most {limit} per user; end unused ones with DELETE "
                            "(or let them expire)") from None
    tell(session_started, transport=transport, protocol_version=protocol_version)
    return state


def admit_stream(session_id: str) -> None:
    """Count a GET stream of the session on this worker; :class:`LimitExceeded` past the limit."""
    if open_streams[session_id] >= mcp_settings.MAX_STREAMS_PER_SESSION:
        raise LimitExceeded(f"Too many open streams for this session: at most {mcp_settings.MAX_STREAMS_PER_SESSION}")
    open_streams[session_id] += 1


def release_stream(session_id: str) -> None:
    open_streams[session_id] -= 1
    if open_streams[session_id] <= 0:
        del open_streams[session_id]


def check_pending_requests(session_id: str, pending: dict[tuple[str, Any], Any]) -> None:
    """Refuse one more server→client request when the session has too many unanswered."""
    outstanding = sum(1 for owner, _ in pending if owner == session_id)
    if outstanding >= mcp_settings.MAX_PENDING_CLIENT_REQUESTS:
        raise McpError(f"Too many requests to the client outstanding (at most "
                       f"{mcp_settings.MAX_PENDING_CLIENT_REQUESTS}); answer them first")
