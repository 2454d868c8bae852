"""
:class:`McpClient`: an MCP client for a project's tests, talking to the project's own ASGI
application in process — through its authentication classes, permissions, hooks, the tool admin's
switches, rate limits, the call log and every feature app, exactly as a client over the network
would, but without a socket or a server.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..protocol.versions import (ALL_VERSIONS, LATEST_MODERN_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
                                 META_LOG_LEVEL, META_PROTOCOL_VERSION, Era, era_of)
from ..threads import on_callers_connection
from .answers import Answers
from .application import flush_deferred, project_application, site_application
from .errors import ErrorResponse, UnansweredRequest
from .identity import Identity
from .results import Completion, Listing, PromptResult, ResourceResult, ToolResult
from .subscriptions import Subscription
from .sync_twins import SyncTwins
from .transport import HttpTransport, header_value


HEADER_MISMATCH = -32020
# A server may ask again after each answer (MCP spec 2026-07-28, SEP-2322); a test that answers
# forever is a loop, not a test.
MAX_INPUT_ROUNDS = 16
LISTS = {"tools/list": "tools", "resources/list": "resources", "resources/templates/list": "resourceTemplates",
         "prompts/list": "prompts"}


class McpClient(Identity, SyncTwins):
    """
    An MCP client for tests, shaped like Django's test client and DRF's ``APIClient``::

        client = McpClient()                       # 2026-07-28; McpClient("2025-11-25") for a session
        client.force_authenticate(user, scopes=["mcp:tools"])
        result = client.call_tool("search_books", query="dune")
        assert not result.is_error and "Dune" in result.text

    ``protocol_version`` picks the era: ``"2026-07-28"`` (the default) sends every request on its
    own, stateless; ``"2025-11-25"`` (or an older handshake revision) opens a session with
    ``initialize`` on the first request and ends it with :meth:`close`. ``app`` is the ASGI
    application (default: the project's ``ASGI_APPLICATION``), or ``site`` an
    :class:`~django_mcp.sites.McpSite` (or its import path) served as ``django_mcp.asgi.application``
    serves one; ``path`` is where MCP is mounted (default ``DJANGO_MCP["MCP_PATH"]``) and ``host``
    the ``Host`` header of every request (default ``"testserver"``, as Django's test client sends).
    ``elicitation``, ``sampling`` and ``roots`` answer what the server asks
    (:mod:`django_mcp.test.answers`), and the client declares the capabilities they make true;
    ``capabilities`` adds to those (or replaces one of them) and ``client_info`` replaces the
    ``clientInfo`` the client sends (default ``{"name": "django-mcp-test-client", "version":
    "1"}``); ``log_level`` asks for log messages from that level;
    ``on_notification`` is called with each notification of a request as it arrives (progress,
    log messages), before the result; ``timeout`` bounds every wait for the server, so a test
    never hangs.

    Every method has an ``a``-prefixed coroutine twin for async tests (``await client.acall_tool(...)``),
    as Django's ORM does. The sync methods serve ``django.test.TestCase``: the request's sync work
    (tools, the ORM) runs on the test's own thread and database connection, inside its transaction.
    """

    def __init__(self, protocol_version: str = LATEST_MODERN_VERSION, *, app: Any = None, site: Any = None,
                 path: str | None = None, host: str = "testserver", elicitation: Any = None, sampling: Any = None,
                 roots: Any = None, capabilities: dict[str, Any] | None = None,
                 client_info: dict[str, Any] | None = None,
                 log_level: str | None = None, on_notification: Any = None, timeout: float = 10.0) -> None:
        if app is not None and site is not None:
            raise TypeError("Give McpClient an app or a site, not both")
        if protocol_version not in ALL_VERSIONS:
            raise ValueError(f"Unknown MCP protocol version {protocol_version!r}; known: {', '.join(ALL_VERSIONS)}")
        self.protocol_version = protocol_version
        self.era = era_of(protocol_version)
        self.answers = Answers(elicitation=elicitation, sampling=sampling, roots=roots)
        self.capabilities = {**self.answers.capabilities(protocol_version), **(capabilities or {})}
        self.client_info = client_info or {"name": "django-mcp-test-client", "version": "1"}
        self.log_level = log_level
        self.timeout = timeout
        self._app = app
        self._site = site
        self._path = path
        self.transport = HttpTransport(None, "", host=host, timeout=timeout)
        self.transport.on_notification = on_notification
        #: The legacy session's id once ``initialize`` opened one; None in 2026-07-28.
        self.session_id: str | None = None
        #: What ``initialize`` (legacy) or ``server/discover`` (2026-07-28) answered, once asked.
        self.server: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        self._input_schemas: dict[str, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"<McpClient {self.protocol_version} {self.path}>"

    # --- where ------------------------------------------------------------------------------

    @property
    def path(self) -> str:
        if self._path is None:
            from ..conf import mcp_settings

            self._path = "/" + mcp_settings.MCP_PATH.strip("/")
        return self._path

    def _ready_transport(self) -> HttpTransport:
        if self.transport.app is None:
            if self._site is not None:
                self.transport.app = site_application(self._site)
            else:
                self.transport.app = self._app if self._app is not None else project_application()
            self.transport.path = self.path
        return self.transport

    # --- the requests, async ------------------------------------------------------------------

    async def arequest(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send any request; its JSON-RPC ``result``. For what the other methods do not cover."""
        result, _ = await self._call(method, dict(params or {}))
        return result

    async def ainitialize(self) -> dict[str, Any]:
        """
        Open the session (legacy era): ``initialize``, then ``notifications/initialized``; the
        ``initialize`` result. Done by the first request anyway. In 2026-07-28, ``server/discover``.
        """
        with on_callers_connection():
            try:
                return await self._initialize()
            finally:
                await flush_deferred()

    async def _initialize(self) -> dict[str, Any]:
        if self.era is Era.MODERN:
            self.server, _ = await self._send("server/discover", {})
            return self.server
        if self.server is not None:
            return self.server
        params = {"protocolVersion": self.protocol_version, "capabilities": self.capabilities,
                  "clientInfo": self.client_info}
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": "initialize", "params": params}
        response, _, exchange = await self._ready_transport().send(message, {})
        assert response is not None
        self.session_id = exchange.headers.get("mcp-session-id")
        self.server = response["result"]
        await self.transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, self._headers(None))
        if self.log_level is not None:
            await self._send("logging/setLevel", {"level": self.log_level})
        return self.server

    async def adiscover(self) -> dict[str, Any]:
        """``server/discover`` (2026-07-28): the server's versions, capabilities and instructions."""
        result, _ = await self._call("server/discover", {})
        return result

    async def aping(self) -> dict[str, Any]:
        """``ping`` (legacy era; 2026-07-28 has none)."""
        result, _ = await self._call("ping", {})
        return result

    async def alist_tools(self) -> Listing:
        """Every tool this client may see, all pages followed."""
        listing = await self._list("tools/list")
        self._input_schemas.update({tool["name"]: tool.get("inputSchema") or {} for tool in listing})
        return listing

    async def alist_resources(self) -> Listing:
        return await self._list("resources/list")

    async def alist_resource_templates(self) -> Listing:
        return await self._list("resources/templates/list")

    async def alist_prompts(self) -> Listing:
        return await self._list("prompts/list")

    async def acall_tool(self, name: str, arguments: dict[str, Any] | None = None, /,
                         **more_arguments: Any) -> ToolResult:
        """
        Call the tool ``name`` with ``arguments`` (a dict, keywords, or both). A tool that fails
        answers a result with ``is_error``; a call the server refuses (unknown tool, invalid
        arguments, no permission) raises :class:`~django_mcp.test.ErrorResponse`.
        """
        params = {"name": name, "arguments": {**(arguments or {}), **more_arguments}}
        try:
            result, notifications = await self._call("tools/call", params, progress=True)
        except ErrorResponse as exc:
            if exc.code != HEADER_MISMATCH or self.era is not Era.MODERN:
                raise
            # An argument the tool mirrors into a header (x-mcp-header) the client did not know of:
            # list the tools and try again, as the specification tells clients to.
            await self.alist_tools()
            result, notifications = await self._call("tools/call", params, progress=True)
        return ToolResult(result, notifications)

    async def aread_resource(self, uri: str) -> ResourceResult:
        result, notifications = await self._call("resources/read", {"uri": uri})
        return ResourceResult(result, notifications)

    async def aget_prompt(self, name: str, arguments: dict[str, Any] | None = None, /,
                          **more_arguments: Any) -> PromptResult:
        arguments = {key: str(value) for key, value in {**(arguments or {}), **more_arguments}.items()}
        result, notifications = await self._call("prompts/get", {"name": name, "arguments": arguments})
        return PromptResult(result, notifications)

    async def acomplete(self, ref: dict[str, Any] | str, argument: str, value: str = "",
                        context: dict[str, str] | None = None) -> Completion:
        """
        ``completion/complete`` of ``argument`` typed so far as ``value``. ``ref`` is a prompt's
        name, a resource template's URI (containing ``{``), or the reference itself.
        """
        if isinstance(ref, str):
            ref = {"type": "ref/resource", "uri": ref} if "{" in ref else {"type": "ref/prompt", "name": ref}
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result, notifications = await self._call("completion/complete", params)
        return Completion(result, notifications)

    async def asubscribe(self, uri: str) -> None:
        """``resources/subscribe`` in a legacy session (updates come on :meth:`listen`'s stream)."""
        if self.era is Era.MODERN:
            raise TypeError("2026-07-28 has no resources/subscribe: use `async with client.listen(uris=[...])`")
        await self._call("resources/subscribe", {"uri": uri})

    async def aunsubscribe(self, uri: str) -> None:
        if self.era is Era.MODERN:
            raise TypeError("2026-07-28 has no resources/unsubscribe: leave the listen() block")
        await self._call("resources/unsubscribe", {"uri": uri})

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               uris: list[str] | tuple[str, ...] = ()) -> Subscription:
        """
        An async context manager holding the stream that change notifications come on (async
        tests only): ``subscriptions/listen`` (2026-07-28) for the lists named and ``uris``, or the
        session's GET stream (legacy, with ``resources/subscribe`` for each URI)::

            async with client.listen(resources=True, uris=["library://books/1"]) as stream:
                await Book.objects.filter(pk=1).aupdate(title="New")
                update = await stream.next("notifications/resources/updated")
        """
        return Subscription(self, tools=tools, prompts=prompts, resources=resources, uris=tuple(uris))

    async def aclose(self) -> None:
        """End the legacy session (``DELETE``); nothing to do in 2026-07-28."""
        if self.session_id is None:
            return
        transport = self._ready_transport()
        with on_callers_connection():
            exchange = transport.exchange("DELETE", self._headers(None))
            try:
                await exchange.start(self.timeout)
                await exchange.body(self.timeout)
            finally:
                await exchange.close(self.timeout)
                await flush_deferred()
        self.session_id, self.server = None, None

    # --- underneath -------------------------------------------------------------------------------

    async def _call(self, method: str, params: dict[str, Any], *, progress: bool = False,
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """One request as the test sees it: the session opened first (legacy), the deferred writes done after."""
        with on_callers_connection():
            try:
                if self.era is Era.LEGACY and self.server is None:
                    await self._initialize()
                return await self._send(method, params, progress=progress)
            finally:
                await flush_deferred()

    async def _send(self, method: str, params: dict[str, Any], *, progress: bool = False,
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send one request (answering the server's questions until it gives a result)."""
        transport = self._ready_transport()
        notifications: list[dict[str, Any]] = []
        for _ in range(MAX_INPUT_ROUNDS):
            request_id = next(self._ids)
            meta = dict(params.get("_meta") or {})
            if progress:
                meta["progressToken"] = f"progress-{request_id}"
            if self.era is Era.MODERN:
                meta.update(self.modern_meta())
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
            ask = self.answers.answer if self.era is Era.LEGACY else None
            response, received, _ = await transport.send(message, self._headers(message), ask=ask)
            assert response is not None
            notifications += received
            result = response.get("result") or {}
            if result.get("resultType") != "input_required":
                return result, notifications
            params = {**params, "inputResponses": await self._input_responses(result)}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
            else:
                params.pop("requestState", None)
        raise UnansweredRequest(f"{method}: the server still asked for input after {MAX_INPUT_ROUNDS} rounds")

    async def _input_responses(self, result: dict[str, Any]) -> dict[str, Any]:
        """The answers to an ``InputRequiredResult``'s questions (MCP spec 2026-07-28, SEP-2322)."""
        responses = {}
        for key, question in (result.get("inputRequests") or {}).items():
            responses[key] = await self.answers.answer(question.get("method", ""), question.get("params") or {})
        return responses

    async def _list(self, method: str) -> Listing:
        items: list[dict[str, Any]] = []
        notifications: list[dict[str, Any]] = []
        cursor = None
        while True:
            result, received = await self._call(method, {"cursor": cursor} if cursor else {})
            items += result.get(LISTS[method]) or []
            notifications += received
            cursor = result.get("nextCursor")
            if not cursor:
                return Listing(items, notifications)

    def modern_meta(self) -> dict[str, Any]:
        """What every 2026-07-28 request carries in ``_meta`` (MCP spec 2026-07-28, basic#messages)."""
        meta = {META_PROTOCOL_VERSION: self.protocol_version, META_CLIENT_INFO: self.client_info,
                META_CLIENT_CAPABILITIES: self.capabilities}
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        return meta

    def _headers(self, message: dict[str, Any] | None) -> dict[str, str]:
        """The per-request headers of this client's era (MCP spec 2026-07-28, basic/transports/streamable-http)."""
        if self.era is Era.LEGACY:
            headers = {}
            if self.server is not None:
                headers["mcp-protocol-version"] = self.server.get("protocolVersion", self.protocol_version)
            if self.session_id:
                headers["mcp-session-id"] = self.session_id
            return headers
        headers = {"mcp-protocol-version": self.protocol_version}
        if message is None:
            return headers
        method, params = message["method"], message.get("params") or {}
        headers["mcp-method"] = method
        if method in ("tools/call", "prompts/get") and "name" in params:
            headers["mcp-name"] = header_value(params["name"])
        elif method == "resources/read" and "uri" in params:
            headers["mcp-name"] = header_value(params["uri"])
        elif method.startswith("tasks/") and "taskId" in params:
            headers["mcp-name"] = header_value(params["taskId"])
        if method == "tools/call":
            properties = (self._input_schemas.get(params.get("name")) or {}).get("properties") or {}
            for argument, value in (params.get("arguments") or {}).items():
                header = (properties.get(argument) or {}).get("x-mcp-header")
                if isinstance(header, str) and value is not None:
                    headers[f"mcp-param-{header}"] = header_value(value)
        return headers
