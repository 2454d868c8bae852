"""The per-request context a transport hands to the dispatcher along with one parsed message."""

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .versions import Era


SendMessage = Callable[[dict[str, Any]], Awaitable[None]]
SendRequest = Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]
Listen = Callable[[dict[str, Any]], Awaitable[AsyncIterator[dict[str, Any]]]]

# RFC 5424 severities in increasing order, as MCP logging uses them (MCP spec 2026-07-28, server/utilities/logging).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class LegacySession(Protocol):
    """What the protocol layer needs from a legacy (initialize-based) session."""

    id: str
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None

    async def set_log_level(self, level: str) -> None: ...

    async def subscribe(self, uri: str) -> None: ...

    async def unsubscribe(self, uri: str) -> None: ...


@dataclass(slots=True)
class RequestContext:
    """
    Everything the dispatcher and the handlers know about one request.

    ``send_message`` delivers request-scoped messages (progress, log notifications; in the legacy
    era also server→client requests) on the request's own stream. ``send_request`` asks a legacy
    client something and waits for the answer; it is None where the client cannot be asked
    (the modern era uses multi-round-trip results instead, MCP spec 2026-07-28,
    basic/patterns/mrtr, SEP-2322). ``listen`` yields change notifications for
    ``subscriptions/listen``.
    """

    era: Era
    protocol_version: str
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    user: Any = None
    # The credential an authentication class accepted (a token, an API key…), or None.
    auth: Any = None
    session: LegacySession | None = None
    request_id: Any = None
    method: str | None = None
    progress_token: Any = None
    log_level: str | None = None
    send_message: SendMessage | None = None
    send_request: SendRequest | None = None
    listen: Listen | None = None
    close_stream: Callable[[], Awaitable[None]] | None = None
    input_answers: dict[str, Any] = field(default_factory=dict)
    #: How the request came: ``"streamable-http"``, ``"http-sse"`` (2024-11-05) or ``"stdio"``.
    transport: str = "streamable-http"
    #: Whether the transport can send the client anything besides the request's one answer: a
    #: stream for notifications (a session's GET stream, ``subscriptions/listen``) or an SSE
    #: response carrying progress and log messages. False on the plain Django view under WSGI,
    #: which answers every request with one JSON body: list-changed, subscribe and logging are then
    #: not announced (MCP spec 2025-11-25, basic/lifecycle#capability-negotiation).
    pushes: bool = True
    # Permission decisions already taken in this request, by (kind, key): a 2026-07-28 tools/call
    # asks once for its mirrored headers and once to run, and the answer cannot change between.
    decisions: dict[tuple[str, str], bool] = field(default_factory=dict)
    # What the backend found by (kind, key) for this request, hidden ones as None: the same
    # tools/call looks its tool up for the mirrored headers and again to run it.
    found: dict[tuple[str, str], Any] = field(default_factory=dict)
    # The Django layer's handle on this request for permission checks and definitions, made once.
    handle: Any = None
    # ``ttlMs``/``cacheScope`` the answered primitive asks for (2026-07-28), over the server's defaults.
    cache_hints: dict[str, Any] | None = None
    # The scopes a refused call, read or get needed and the credential lacked: the HTTP transport
    # answers 403 with an ``insufficient_scope`` challenge (RFC 6750 section 3.1) so the client can
    # ask the user for more (MCP spec 2025-11-25, basic/authorization, "Scope Challenge Handling").
    scope_challenge: frozenset[str] | None = None
    #: The request's params as the client sent them (a dict or None), for hooks and extensions that
    #: read a field the core does not (2025-11-25's ``task`` of a ``tools/call``, an extension's
    #: ``subscriptions/listen`` filter keys).
    params: Any = None
    #: True where answers to the server's questions come by running the work again with them, as
    #: in 2026-07-28 (MCP spec 2026-07-28, basic/patterns/mrtr): a missing answer raises
    #: ``InputRequired`` whatever the era. Set by whatever runs work outside a request (a task).
    rerun_for_input: bool = False
    #: The HTTP request's headers, lower-case names as bytes to values (the ASGI scope's, decoded
    #: as latin-1), for hooks that read one (a W3C ``traceparent``, a tenant's header); None on
    #: stdio and for work outside a request.
    http_headers: Mapping[bytes, str] | None = None
    #: The HTTP client's ``(host, port)`` as the server reports it (the ASGI scope's ``client``:
    #: behind a proxy, the real client's only where the server trusts the proxy's headers), and the
    #: HTTP version (``"1.1"``, ``"2"``); None on stdio.
    client_address: tuple[str, int] | None = None
    http_version: str | None = None

    @classmethod
    def for_legacy(cls, session: LegacySession, message: dict[str, Any], *, user: Any, auth: Any = None,
                   **transport: Any) -> "RequestContext":
        """The context of a request (or notification) in a legacy session; ``transport`` gives the senders."""
        params = message.get("params") or {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        return cls(era=Era.LEGACY, protocol_version=session.protocol_version,
                   client_capabilities=session.client_capabilities, client_info=session.client_info, user=user,
                   auth=auth, session=session, request_id=message.get("id"), method=message.get("method"),
                   progress_token=meta.get("progressToken"), log_level=session.log_level, **transport)

    @classmethod
    def for_modern(cls, envelope: Any, message: dict[str, Any], *, user: Any, auth: Any = None,
                   **transport: Any) -> "RequestContext":
        """The context of a stateless 2026-07-28 request, from its validated ``_meta`` envelope."""
        meta = message["params"]["_meta"]
        return cls(era=Era.MODERN, protocol_version=envelope.protocol_version,
                   client_capabilities=envelope.client_capabilities, client_info=envelope.client_info, user=user,
                   auth=auth, request_id=message["id"], method=message.get("method"),
                   progress_token=meta.get("progressToken"), log_level=envelope.log_level, **transport)

    @property
    def is_modern(self) -> bool:
        """True for a 2026-07-28 stateless request."""
        return self.era is Era.MODERN

    def wants_log(self, level: str) -> bool:
        """
        Whether a log message of ``level`` may be sent for this request: in the modern era only
        when the request opted in with a level (MCP spec 2026-07-28, server/utilities/logging), in
        the legacy era when the session's level (if one was set) allows it.
        """
        threshold = self.log_level
        if threshold is None:
            return not self.is_modern
        try:
            return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)
        except ValueError:
            return False
