"""Prompts (MCP spec 2026-07-28, server/prompts)."""

from typing import Any

from ..context import RequestContext
from ..pagination import page_fields
from .host import HandlerHost
from .interactive import run_interactive


async def list_prompts(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """One page of prompt definitions."""
    page = await dispatcher.backend.list_prompts(params.cursor if params else None, ctx)
    return dispatcher.cacheable({"prompts": page.items, **page_fields(page.next_cursor)}, ctx)


async def get_prompt(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """Render a prompt; its result is not cacheable (MCP spec 2026-07-28, server/prompts)."""
    arguments = params.arguments or {}

    async def run() -> dict[str, Any]:
        return await dispatcher.backend.get_prompt(params.name, arguments, ctx)

    return await run_interactive(dispatcher, ctx, params, binding={"name": params.name, "arguments": arguments},
                                 run=run)
