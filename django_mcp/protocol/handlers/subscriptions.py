"""
``subscriptions/listen`` (2026-07-28, MCP spec 2026-07-28, basic/patterns/subscriptions):
acknowledge the honoured subset of the filter first, then forward change notifications tagged
with the subscription id until either side ends.
"""

from typing import Any

from .. import jsonrpc
from ..backend import Backend
from ..context import RequestContext
from ..errors import MethodNotFound
from ..extensions import extension_listen_filter, installed_extensions
from ..versions import META_SUBSCRIPTION_ID
from .host import HandlerHost


def honoured_filter(requested: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    """The part of the client's filter this server will serve; unsupported types are omitted."""
    honoured: dict[str, Any] = {}
    for flag, capability in (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                             ("resourcesListChanged", "resources")):
        if requested.get(flag) and (capabilities.get(capability) or {}).get("listChanged"):
            honoured[flag] = True
    uris = requested.get("resourceSubscriptions")
    if uris and (capabilities.get("resources") or {}).get("subscribe"):
        honoured["resourceSubscriptions"] = list(uris)
    return honoured


async def honoured_listen_filter(backend: Backend, requested: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """
    What of ``requested`` (a listen filter's core keys) the server serves this request: the
    notifications it announces, the resources this user may read — the rest left out of the
    acknowledged subset exactly like URIs that do not exist — and the keys installed extensions
    honour. A backend's ``listen_filter`` starts from this.
    """
    honoured = honoured_filter(requested, backend.capabilities(ctx))
    if "resourceSubscriptions" in honoured:
        # Only resources this user may read: the rest are left out of the acknowledged subset,
        # exactly like URIs that do not exist.
        readable = [uri for uri in honoured["resourceSubscriptions"]
                    if await backend.can_subscribe(uri, ctx)]
        if readable:
            honoured["resourceSubscriptions"] = readable
        else:
            del honoured["resourceSubscriptions"]
    # Keys an installed extension adds to the filter (the tasks extension's taskIds), from the
    # params as sent: the revision's model knows only the core's.
    raw = (ctx.params or {}).get("notifications") if isinstance(ctx.params, dict) else None
    if installed_extensions() and isinstance(raw, dict):
        honoured.update(await extension_listen_filter(raw, ctx))
    return honoured


async def listen(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """Hold the stream open and relay notifications; returns when the server ends the subscription."""
    if ctx.send_message is None or ctx.listen is None:
        # Not served here at all (a WSGI server cannot hold the stream open), which the client
        # learns as it would of any method the server does not implement (MCP spec 2026-07-28,
        # basic/transports/streamable-http: 404 for -32601). No list-changed or subscribe
        # capability was announced for such a transport either (RequestContext.pushes).
        raise MethodNotFound("subscriptions/listen is not served here: this endpoint cannot hold a stream open")
    requested = params.notifications.model_dump(by_alias=True, exclude_none=True)
    honoured = await dispatcher.backend.listen_filter(requested, ctx)
    subscription_id = ctx.request_id
    # Join the notification sources before acknowledging, so no change after the ack is missed.
    notifications = await ctx.listen(honoured)
    await ctx.send_message(jsonrpc.notification(
        "notifications/subscriptions/acknowledged",
        {"_meta": {META_SUBSCRIPTION_ID: subscription_id}, "notifications": honoured},
    ))
    async for message in notifications:
        params_out = dict(message.get("params") or {})
        params_out["_meta"] = {**(params_out.get("_meta") or {}), META_SUBSCRIPTION_ID: subscription_id}
        await ctx.send_message(jsonrpc.notification(message["method"], params_out))
    return {"_meta": {META_SUBSCRIPTION_ID: subscription_id}}
