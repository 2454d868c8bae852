"""
Running a tool under its admin row: the rate limit first, then the call, then a line in the call
log (:class:`~django_mcp.tools.models.McpToolCall`).

Rate limits count calls per user and period in Django's cache framework
(``DJANGO_MCP["RATE_LIMIT_CACHE"]``), in fixed windows, so they hold across workers that share a
cache. A call over the limit is an ``isError`` result that says when to retry, which the model can
act on (MCP spec 2025-11-25, server/tools, "Error Handling").

The log is written off the request path: each worker queues entries and a background task
saves them in batches, so a call waits for no database write. Entries still queued when a
worker stops are lost.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..conf import mcp_settings
from ..protocol.errors import McpError
from ..protocol.input import InputRequired
from ..threads import in_thread
from .base import error_result


if TYPE_CHECKING:
    from ..protocol.context import RequestContext
    from .policies import ToolPolicy


logger = logging.getLogger("django_mcp.tools")

REDACTED = "[redacted]"
FLUSH_SECONDS = 0.25
BATCH_SIZE = 200


def redact(value: Any, names: frozenset[str]) -> Any:
    """``value`` with the values of keys in ``names`` (case-insensitive) replaced, at any depth."""
    if isinstance(value, dict):
        return {key: REDACTED if str(key).lower() in names else redact(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item, names) for item in value]
    return value


def user_key(user: Any) -> str:
    return f"user:{user.pk}" if user is not None and getattr(user, "is_authenticated", False) else "anonymous"


async def over_limit(site_name: str, tool: str, policy: ToolPolicy, user: Any) -> int | None:
    """Count this call; the seconds until the window ends if it is one too many, else None."""
    if policy.rate is None:
        return None
    from django.core.cache import caches

    calls, period = policy.rate
    now = time.time()
    window = int(now // period)
    key = f"django_mcp:ratelimit:{site_name}:{tool}:{user_key(user)}:{period}:{window}"
    cache = caches[mcp_settings.RATE_LIMIT_CACHE]
    await cache.aadd(key, 0, timeout=period + 1)
    try:
        count = await cache.aincr(key)
    except ValueError:  # expired between add and incr: this call opens the window
        await cache.aset(key, 1, timeout=period + 1)
        count = 1
    if count <= calls:
        return None
    return max(1, math.ceil((window + 1) * period - now))


def client_name(auth: Any) -> str:
    """The OAuth client behind a token (its name, else its id); blank for other credentials."""
    application = getattr(auth, "application", None)
    if application is None:
        return ""
    return str(getattr(application, "name", "") or getattr(application, "client_id", ""))[:200]


async def run_tool(site: Any, tool: Any, policy: ToolPolicy | None, arguments: dict[str, Any],
                   ctx: RequestContext) -> dict[str, Any]:
    """``tool.run`` under its row's rate limit, recorded in the call log."""
    started = time.perf_counter()
    outcome, message = "ok", ""
    try:
        if policy is not None:
            retry = await over_limit(getattr(site, "name", "default"), tool.name, policy, ctx.user)
            if retry is not None:
                outcome = "rate_limited"
                message = (f"Rate limit reached for tool {tool.name} ({policy.rate_text} per user). "
                           f"Retry in {retry} seconds.")
                return error_result(message)
        result = await tool.run(arguments, ctx)
        if result.get("isError"):
            outcome = "tool_error"
            blocks = result.get("content") or [{}]
            message = str(blocks[0].get("text", ""))[:2000]
        return result
    except InputRequired:
        outcome = ""  # the call comes again with the answers: logged then
        raise
    except asyncio.CancelledError:
        outcome = "cancelled"
        raise
    except McpError as exc:
        outcome, message = "protocol_error", exc.message[:2000]
        raise
    finally:
        if outcome and mcp_settings.CALL_LOG:
            try:
                call_log.record(site, tool.name, policy, arguments, ctx, outcome, message,
                                (time.perf_counter() - started) * 1000)
            except Exception:  # the log must never cost the caller their answer
                logger.warning("Could not record a call of %s", tool.name, exc_info=True)


class CallLog:
    """A per-worker queue of call-log entries, saved in batches by a task on the event loop."""

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.wakeup: asyncio.Event | None = None

    def record(self, site: Any, tool: str, policy: ToolPolicy | None, arguments: dict[str, Any],
               ctx: RequestContext, outcome: str, message: str, duration_ms: float) -> None:
        from django.contrib.auth import get_user_model

        keep = policy is None or policy.log_arguments
        names = frozenset(name.lower() for name in mcp_settings.CALL_LOG_REDACT)
        user = ctx.user if ctx.user is not None and getattr(ctx.user, "is_authenticated", False) else None
        stored_user = user if isinstance(user, get_user_model()) else None
        self.pending.append({
            "site": getattr(site, "name", "default"), "tool": tool,
            "user_id": stored_user.pk if stored_user is not None else None,
            "username": stored_user.get_username() if stored_user is not None else (str(user) if user else ""),
            "client": client_name(ctx.auth),
            "arguments": redact(arguments, names) if keep else None, "outcome": outcome, "message": message,
            "duration_ms": round(duration_ms, 3), "protocol_version": ctx.protocol_version or "",
            "transport": ctx.transport or "", "created": datetime.now(timezone.utc)})
        self._start()
        if len(self.pending) >= BATCH_SIZE and self.wakeup is not None:
            self.wakeup.set()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.loop is loop and self.task is not None and not self.task.done():
            return
        self.loop = loop
        self.wakeup = asyncio.Event()
        self.task = loop.create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self.wakeup.wait(), FLUSH_SECONDS)
            except asyncio.TimeoutError:
                pass
            self.wakeup.clear()
            await self.flush()

    async def flush(self) -> None:
        """Save what is queued (tests call this instead of waiting for the next batch)."""
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        try:
            await _save(batch)
        except Exception:
            logger.warning("Could not write %d call-log entries", len(batch), exc_info=True)


@in_thread
def _save(batch: list[dict[str, Any]]) -> None:
    from .models import McpToolCall

    McpToolCall.objects.bulk_create([McpToolCall(**entry) for entry in batch])


call_log = CallLog()
