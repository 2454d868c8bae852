"""The :class:`Context` handed to tools, prompts and resources that ask for it."""

from typing import Any

import mcp_types

from .protocol import jsonrpc
from .protocol.context import RequestContext
from .protocol.input import ELICIT, LIST_ROOTS, SAMPLE, request_input


ACTIONS = {
    "tools/list": "list",
    "resources/list": "list",
    "resources/templates/list": "list",
    "prompts/list": "list",
    "tools/call": "call",
    "resources/read": "read",
    "resources/subscribe": "read",
    "subscriptions/listen": "read",
    "prompts/get": "get",
    "completion/complete": "complete",
}


class Context:
    """
    A handle on the current MCP request, for code registered with ``@tool``, ``@prompt`` or
    ``@resource``: who is asking, what the client can do, and ways to talk back — progress, log
    messages, and questions to the client (elicitation, sampling, roots).

    Questions work the same in both protocol eras. A legacy client is asked with a real request
    and the call waits for its answer; a 2026-07-28 client gets an ``InputRequiredResult`` and the
    function runs again from the top when the client retries with the answers, so code that asks
    should do so before it changes anything, and in the same order each time.

    django_mcp makes one per request and passes it wherever code asks for it (a parameter annotated
    ``Context``, permission checks, the ``get_*`` hooks); code never makes one itself.
    ``request`` is the protocol layer's ``RequestContext`` of that request, which the properties
    and methods below use.
    """

    def __init__(self, request: RequestContext) -> None:
        self.request = request
        self._auto_keys = 0

    @property
    def user(self) -> Any:
        """The Django user the request runs as (``AnonymousUser`` when nobody authenticated)."""
        return self.request.user

    @property
    def auth(self) -> Any:
        """
        The credential the request was authenticated with (an OAuth access token, an API key…),
        as the authentication class returned it; None for anonymous and session-cookie requests.
        """
        return self.request.auth

    @property
    def scopes(self) -> frozenset[str] | None:
        """
        The scopes ``auth`` grants: its ``scopes`` (any iterable of names) or its space-separated
        ``scope`` string, as OAuth tokens carry them; None when the credential has no scopes.
        """
        auth = self.request.auth
        if auth is None:
            return None
        scopes = getattr(auth, "scopes", None)
        if scopes is not None and not isinstance(scopes, str):
            return frozenset(scopes)
        scope = scopes if isinstance(scopes, str) else getattr(auth, "scope", None)
        return frozenset(scope.split()) if isinstance(scope, str) else None

    @property
    def method(self) -> str | None:
        """The MCP method being served (``tools/call``, ``resources/list``…)."""
        return self.request.method

    @property
    def action(self) -> str | None:
        """
        The method as a permission action: ``list`` for the ``*/list`` methods, ``call``
        (``tools/call``), ``read`` (``resources/read`` and subscriptions), ``get``
        (``prompts/get``) or ``complete``.
        """
        return ACTIONS.get(self.request.method or "")

    @property
    def request_id(self) -> Any:
        return self.request.request_id

    @property
    def protocol_version(self) -> str:
        return self.request.protocol_version

    @property
    def era(self) -> str:
        """``"legacy"`` for initialize-based sessions, ``"modern"`` for 2026-07-28 requests."""
        return self.request.era.value

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.request.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        return self.request.client_info

    @property
    def session_id(self) -> str | None:
        """The legacy session id, or None for stateless requests."""
        return self.request.session.id if self.request.session is not None else None

    def has_capability(self, name: str) -> bool:
        """Whether the client declared the capability ``name`` (``sampling``, ``elicitation``, ``roots``…)."""
        return self.request.client_capabilities.get(name) is not None

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` if the client asked for progress (MCP spec 2026-07-28, basic/patterns/progress)."""
        token = self.request.progress_token
        if token is None or self.request.send_message is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.request.send_message(jsonrpc.notification("notifications/progress", params))

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` when the client's log level lets it through (MCP spec 2026-07-28, server/utilities/logging)."""
        if self.request.send_message is None or not self.request.wants_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.request.send_message(jsonrpc.notification("notifications/message", params))

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)

    async def close_sse_stream(self) -> None:
        """
        End the HTTP connection of this request's SSE stream while the work goes on (2025-11-25
        polling, SEP-1699): the client reconnects with ``Last-Event-ID`` and receives the rest.
        Useful before long waits behind proxies that cut idle connections. Does nothing where the
        stream is not resumable (other revisions, stdio, JSON answers).
        """
        if self.request.close_stream is not None:
            await self.request.close_stream()

    async def request_input(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """
        Ask several questions at once: ``{key: {"method": ..., "params": ...}}`` with methods
        ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``. Returns the answers by
        key as ``mcp_types`` result models.
        """
        return await request_input(self.request, requests)

    async def elicit(self, message: str, requested_schema: dict[str, Any], *,
                     key: str | None = None) -> mcp_types.ElicitResult:
        """Ask the user to fill in a form (flat object schema); returns the ``ElicitResult``."""
        params = {"mode": "form", "message": message, "requestedSchema": requested_schema}
        if not self.request.is_modern:
            params.pop("mode")  # form mode is implied before 2025-11-25 and valid after
        key = key or self._next_key("elicit")
        return (await self.request_input({key: {"method": ELICIT, "params": params}}))[key]

    async def sample(self, messages: str | list[dict[str, Any]], *, max_tokens: int, key: str | None = None,
                     **params: Any) -> mcp_types.CreateMessageResult:
        """Ask the client's model for a completion; a plain string becomes one user message."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        body = {"messages": messages, "maxTokens": max_tokens, **params}
        key = key or self._next_key("sample")
        return (await self.request_input({key: {"method": SAMPLE, "params": body}}))[key]

    async def list_roots(self, *, key: str | None = None) -> mcp_types.ListRootsResult:
        """Ask the client for its roots."""
        key = key or self._next_key("roots")
        return (await self.request_input({key: {"method": LIST_ROOTS, "params": {}}}))[key]

    def _next_key(self, prefix: str) -> str:
        # Deterministic per run, so a re-run after InputRequired finds its earlier answers.
        self._auto_keys += 1
        return f"{prefix}_{self._auto_keys}"
