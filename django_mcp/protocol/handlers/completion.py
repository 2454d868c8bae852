"""``completion/complete`` (MCP spec 2026-07-28, server/utilities/completion)."""

from typing import Any

from ..context import RequestContext
from .host import HandlerHost


MAX_VALUES = 100


async def complete(dispatcher: HandlerHost, params: Any, ctx: RequestContext) -> dict[str, Any]:
    """Suggestions for a prompt argument or a template variable, at most 100 of them."""
    ref = params.ref.model_dump(by_alias=True, exclude_none=True)
    argument = params.argument.model_dump(by_alias=True, exclude_none=True)
    context = (params.context.arguments or {}) if getattr(params, "context", None) else {}
    completion = await dispatcher.backend.complete(ref, argument, context, ctx)
    values = list(completion.get("values", []))
    shaped: dict[str, Any] = {"values": values[:MAX_VALUES]}
    total = completion.get("total", len(values))
    shaped["total"] = total
    shaped["hasMore"] = bool(completion.get("hasMore", len(values) > MAX_VALUES))
    return {"completion": shaped}
