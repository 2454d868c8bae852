"""Resources (MCP spec 2026-07-28, server/resources): listing, templates, reading, and legacy subscriptions."""

from typing import Any

from ..context import RequestContext
from ..errors import McpError
from ..pagination import page_fields
from .host import HandlerHost
from .interactive import run_interactive


async def list_resources(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """One page of concrete resources."""
    page = await dispatcher.backend.list_resources(params.cursor if params else None, ctx)
    return dispatcher.cacheable({"resources": page.items, **page_fields(page.next_cursor)}, ctx)


async def list_templates(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """One page of RFC 6570 resource templates."""
    page = await dispatcher.backend.list_resource_templates(params.cursor if params else None, ctx)
    return dispatcher.cacheable({"resourceTemplates": page.items, **page_fields(page.next_cursor)}, ctx)


async def read_resource(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """Read one URI; unknown URIs raise ``ResourceNotFound`` (never an empty ``contents``)."""

    async def run() -> dict[str, Any]:
        contents = await dispatcher.backend.read_resource(params.uri, ctx)
        return dispatcher.cacheable({"contents": contents}, ctx)

    return await run_interactive(dispatcher, ctx, params, binding={"uri": params.uri}, run=run)


async def subscribe(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """Legacy ``resources/subscribe``: later ``notifications/resources/updated`` go to the session."""
    if ctx.session is None:
        raise McpError("resources/subscribe needs a session")
    # The backend checks the URI is one this request may read (else InvalidParams) and subscribes.
    await dispatcher.backend.subscribe(params.uri, ctx)
    return {}


async def unsubscribe(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """Legacy ``resources/unsubscribe``."""
    if ctx.session is None:
        raise McpError("resources/unsubscribe needs a session")
    await ctx.session.unsubscribe(params.uri)
    return {}
