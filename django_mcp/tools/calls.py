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
import json
import logging
import math
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from django.core.cache.backends.locmem import LocMemCache

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
_cached: dict[str, Any] = {}


def _redacted_names() -> frozenset[str]:
    """``CALL_LOG_REDACT`` as a lower-case set, made again only when the setting changes."""
    configured = mcp_settings.CALL_LOG_REDACT  # a new list object after a settings reload
    if _cached.get("redact_source") is not configured:
        _cached["redact_source"], _cached["redact"] = configured, frozenset(name.lower() for name in configured)
    return _cached["redact"]


def _user_model() -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model()


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
    if isinstance(cache, LocMemCache):
        # In process memory behind a lock: microseconds, so no thread hop (three hops cost ~1 ms).
        count = _count(cache, key, period)
    else:
        count = await _count_in_thread(cache, key, period)  # network caches block: one hop for both steps
    if count <= calls:
        return None
    return max(1, math.ceil((window + 1) * period - now))


def _count(cache: Any, key: str, period: int) -> int:
    cache.add(key, 0, timeout=period + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: this call opens the window
        cache.set(key, 1, timeout=period + 1)
        return 1


_count_in_thread = in_thread(_count)


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
        keep = policy is None or policy.log_arguments
        user = ctx.user if ctx.user is not None and getattr(ctx.user, "is_authenticated", False) else None
        stored_user = user if isinstance(user, _user_model()) else None
        self.pending.append({
            "site": getattr(site, "name", "default"), "tool": tool,
            "user_id": stored_user.pk if stored_user is not None else None,
            "username": stored_user.get_username() if stored_user is not None else (str(user) if user else ""),
            "client": client_name(ctx.auth),
            "arguments": redact(arguments, _redacted_names()) if keep else None, "outcome": outcome, "message": message,
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


#: The call log's columns, in the order :func:`_save` writes them.
COLUMNS = ("site", "tool", "user_id", "username", "client", "arguments", "outcome", "message", "duration_ms",
           "protocol_version", "transport", "created")


@in_thread
def _save(batch: list[dict[str, Any]]) -> None:
    """
    One ``executemany`` per batch. Not ``bulk_create``: building a model instance and compiling
    its values per row took 120-240 us of the worker's one core per call (benchmarks/tool_admin.py),
    which the event loop pays for through the interpreter lock.
    """
    from django.db import connections, router, transaction

    from .models import McpToolCall

    alias = router.db_for_write(McpToolCall)
    connection = connections[alias]
    meta = McpToolCall._meta
    quote = connection.ops.quote_name
    columns = ", ".join(quote(meta.get_field(name).column) for name in COLUMNS)
    placeholders = ", ".join(["%s"] * len(COLUMNS))
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders})"
    adapt_time = connection.ops.adapt_datetimefield_value
    rows = [(entry["site"], entry["tool"], entry["user_id"], entry["username"], entry["client"],
             None if entry["arguments"] is None else json.dumps(entry["arguments"], default=str),
             entry["outcome"], entry["message"], entry["duration_ms"], entry["protocol_version"],
             entry["transport"], adapt_time(entry["created"])) for entry in batch]
    # One transaction per batch: in autocommit every row would be a commit of its own.
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        cursor.executemany(sql, rows)


call_log = CallLog()
