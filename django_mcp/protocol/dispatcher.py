"""
The dispatcher: one parsed message plus its context in, one response out.

It gates methods by the request's protocol revision (``mcp_types.methods`` holds the per-revision
method maps and schemas), validates params, calls the handler, shapes the result for the revision
(legacy results carry no ``resultType``; modern ones always do, plus ``serverInfo`` in ``_meta``,
MCP spec 2026-07-28, basic#messages; MCP spec 2026-07-28,
basic/versioning#backward-compatibility-with-initialization-based-versions) and turns exceptions into JSON-RPC errors.
"""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types.methods import CLIENT_REQUESTS, serialize_server_result
from pydantic import BaseModel, ValidationError

from . import jsonrpc
from .backend import Backend, StateCodec
from .context import RequestContext
from .errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RESOURCE_NOT_FOUND_LEGACY,
    InternalError,
    McpError,
    MethodNotFound,
    InvalidParams,
    echo,
    echo_text,
)
from .extensions import ExtensionResult, extension_method, installed_extensions
from .handlers import completion, lifecycle, prompts, resources, subscriptions, tools
from .plain_results import is_plain_server_info, is_plain_text_call_result
from .versions import META_SERVER_INFO


logger = logging.getLogger("django_mcp.protocol")

Handler = Callable[["Dispatcher", Any, RequestContext], Awaitable[dict[str, Any]]]
#: What runs one method: ``call(method, params, ctx)`` → the result (:meth:`Dispatcher.call`).
MethodCall = Callable[[str, Any, RequestContext], Awaitable[dict[str, Any]]]

HANDLERS: dict[str, Handler] = {
    "ping": lifecycle.ping,
    "logging/setLevel": lifecycle.set_level,
    "server/discover": lifecycle.discover,
    "tools/list": tools.list_tools,
    "tools/call": tools.call_tool,
    "resources/list": resources.list_resources,
    "resources/templates/list": resources.list_templates,
    "resources/read": resources.read_resource,
    "resources/subscribe": resources.subscribe,
    "resources/unsubscribe": resources.unsubscribe,
    "prompts/list": prompts.list_prompts,
    "prompts/get": prompts.get_prompt,
    "completion/complete": completion.complete,
    "subscriptions/listen": subscriptions.listen,
}

# Which server capability each method needs (MCP spec 2026-07-28, architecture#capability-negotiation): without it the
# method is -32601.
CAPABILITY_FOR_METHOD = {
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
}


class Dispatcher:
    """Serves MCP requests of every revision against one :class:`Backend`."""

    def __init__(self, backend: Backend, *, state_codec: StateCodec, list_ttl_ms: int = 0,
                 cache_scope: str = "private") -> None:
        self.backend = backend
        self.state_codec = state_codec
        self.list_ttl_ms = list_ttl_ms
        self.cache_scope = cache_scope
        self._server_info: dict[str, Any] | None = None
        self._server_info_is_plain = False

    def server_info(self) -> dict[str, Any]:
        """
        The backend's ``Implementation``, asked once: every 2026-07-28 result carries it. A
        dispatcher is made per site and made again when settings change (``transports.http``).
        """
        if self._server_info is None:
            self._server_info = self.backend.server_info()
            self._server_info_is_plain = is_plain_server_info(self._server_info)
        return self._server_info

    async def handle_request(self, message: jsonrpc.Message, ctx: RequestContext,
                             call: MethodCall | None = None) -> jsonrpc.Message:
        """
        Answer one request message; never raises. ``call`` stands in for :meth:`call` (what wraps
        it, such as the hooks around every request, ends by calling it).
        """
        request_id = message["id"]
        try:
            result = await (call or self.call)(message["method"], message.get("params"), ctx)
        except McpError as exc:
            return jsonrpc.error_response(request_id, self.error_for_era(exc, ctx))
        except Exception:
            logger.exception("Unhandled error while serving %s", message.get("method"))
            return jsonrpc.error_response(request_id, InternalError())
        return jsonrpc.result_response(request_id, result)

    async def call(self, method: str, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
        """Run one method and return its wire-shaped result; raises :class:`McpError`."""
        handler = HANDLERS.get(method)
        if handler is None:
            extension_handler = extension_method(method, ctx) if installed_extensions() else None
            if extension_handler is None:
                raise MethodNotFound(data=echo(method))
            # An extension's method validates its own params: the core schemas do not know it.
            ctx.method, ctx.params = method, params
            return self.shape_result(method, await extension_handler(self, params, ctx), ctx)
        needed = CAPABILITY_FOR_METHOD.get(method)
        if needed is not None and needed not in self.backend.capabilities(ctx):
            raise MethodNotFound(f"Method not found: {method} (the server offers no {needed})", data=echo(method))
        request = self.parse(method, params, ctx)
        ctx.method = method
        ctx.params = params
        result = await handler(self, request.params, ctx)
        return self.shape_result(method, result, ctx)

    def parse(self, method: str, params: dict[str, Any] | None, ctx: RequestContext) -> BaseModel:
        """
        Validate params against the revision's own request model; a method that revision lacks is
        -32601. Handlers read the fields of that model. ``parse_client_request`` would validate
        the same body a second time into ``mcp_types``' version-free model, whose only further
        field (``task``, of the tasks extension) nothing here serves: a tenth of a call's cost.
        """
        model = CLIENT_REQUESTS.get((method, ctx.protocol_version))
        if model is None:
            raise MethodNotFound(data=echo(method))
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": method}
        if params is not None:
            body["params"] = params
        try:
            return model.model_validate(body, by_name=False)
        except ValidationError as exc:
            first = exc.errors()[0]
            # A location names the client's own keys (``arguments.<key>``): repeated, but cut short.
            where = echo_text(".".join(str(part) for part in first["loc"]))
            raise InvalidParams(f"Invalid params for {method}: {where}: {first['msg']}") from None

    def shape_result(self, method: str, result: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """
        Validate our own result against the revision's schema and drop what it does not know.
        ``mcp_types`` describes every handshake revision with the 2025-11-25 models, so fields
        added in 2025-06-18 (``title``, ``structuredContent``…) reach older clients too; they
        ignore unknown keys.
        """
        modern = ctx.is_modern
        if isinstance(result, ExtensionResult):
            # Its shape is the extension's (a task handle answering tools/call): not the method's schema.
            if not modern:
                return dict(result)
            meta = dict(result.get("_meta") or {})
            meta.setdefault(META_SERVER_INFO, self.server_info())
            return {"resultType": "complete", **result, "_meta": meta}
        if method == "tools/call" and is_plain_text_call_result(result):
            # The schema round trip would return it unchanged. Asked before the 2026-07-28 members
            # are added: those are ours, and only the server info in them needs looking at.
            if not modern:
                return result
            info = self.server_info()
            if self._server_info_is_plain:
                return {"resultType": "complete", **result, "_meta": {META_SERVER_INFO: info}}
        if modern:
            meta = dict(result.get("_meta") or {})
            meta.setdefault(META_SERVER_INFO, self.server_info())
            result = {"resultType": "complete", **result, "_meta": meta}
        try:
            return serialize_server_result(method, ctx.protocol_version, result)
        except KeyError:
            return result
        except ValidationError as exc:
            logger.error("Result of %s does not match the %s schema: %s", method, ctx.protocol_version, exc)
            raise InternalError("The server produced an invalid result") from None

    def error_for_era(self, exc: McpError, ctx: RequestContext) -> dict[str, Any]:
        """The JSON-RPC error member, with resource-not-found spelled the era's way (MCP spec 2026-07-28,
        server/resources)."""
        error = exc.to_error()
        if exc.code == RESOURCE_NOT_FOUND_LEGACY and ctx.is_modern:
            error["code"] = INVALID_PARAMS
        elif exc.code == MISSING_REQUIRED_CLIENT_CAPABILITY and not ctx.is_modern:
            # -32021 exists only in 2026-07-28; older clients get the generic invalid request.
            error["code"] = INVALID_REQUEST
        return error

    def cacheable(self, result: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Add the 2026-07-28 caching directives (MCP spec 2026-07-28, server/utilities/caching); legacy shaping drops
        them."""
        if ctx.is_modern:
            if ctx.cache_hints:
                for key, value in ctx.cache_hints.items():
                    result.setdefault(key, value)
            result.setdefault("ttlMs", self.list_ttl_ms)
            result.setdefault("cacheScope", self.cache_scope)
            result.setdefault("resultType", "complete")
        return result
