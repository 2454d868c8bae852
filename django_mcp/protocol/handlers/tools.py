"""``tools/list`` and ``tools/call`` (MCP spec 2026-07-28, server/tools)."""

from typing import Any

from ..context import RequestContext
from ..pagination import page_fields
from .host import HandlerHost
from .interactive import run_interactive


async def list_tools(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """One page of tool definitions, in a deterministic order (registration order)."""
    page = await dispatcher.backend.list_tools(params.cursor if params else None, ctx)
    return dispatcher.cacheable({"tools": page.items, **page_fields(page.next_cursor)}, ctx)


async def call_tool(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """Run a tool; failures inside it come back as ``isError`` results from the backend."""
    arguments = params.arguments or {}

    async def run() -> dict[str, Any]:
        return await dispatcher.backend.call_tool(params.name, arguments, ctx)

    return await run_interactive(dispatcher, ctx, params, binding={"name": params.name, "arguments": arguments},
                                 run=run)
