"""
A ``tools/call`` through the installed hooks (:mod:`django_mcp.hooks`), with its outcome sent to
observers (:data:`django_mcp.signals.tool_called`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from .hooks import HookChains, ToolCall
from .protocol.context import RequestContext
from .protocol.errors import McpError
from .protocol.input import InputRequired
from .signals import tool_called


logger = logging.getLogger("django_mcp.tools")


async def run_call(site: Any, chains: HookChains, tool: Any, arguments: dict[str, Any],
                   ctx: RequestContext) -> dict[str, Any]:
    """``tool.run`` inside the call hooks, then the outcome to :data:`~django_mcp.signals.tool_called`."""
    call = ToolCall(site, tool, arguments, ctx)
    if not tool_called.receivers:
        return await chains.run(call)
    started = time.perf_counter()
    outcome, message = "ok", ""
    try:
        result = await chains.run(call)
        if result.get("isError"):
            outcome = call.outcome or "tool_error"
            blocks = result.get("content") or [{}]
            message = str(blocks[0].get("text", ""))[:2000]
        return result
    except InputRequired:
        outcome = ""  # the call comes again with the answers: observed then
        raise
    except asyncio.CancelledError:
        outcome = "cancelled"
        raise
    except McpError as exc:
        outcome, message = "protocol_error", exc.message[:2000]
        raise
    finally:
        if outcome:
            try:
                tool_called.send(sender=site, call=call, outcome=outcome, message=message,
                                 duration_ms=(time.perf_counter() - started) * 1000)
            except Exception:  # an observer must never cost the caller their answer
                logger.warning("An observer of tool_called failed for %s", tool.name, exc_info=True)
