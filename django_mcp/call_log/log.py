"""
The call log (:class:`~django_mcp.call_log.models.McpToolCall`): every ``tools/call`` as the signal
:data:`django_mcp.signals.tool_called` reports it, who called which tool, with which redacted
arguments, and how it ended.

The log is written off the request path: each worker queues entries and a background task
saves them in batches, so a call waits for no database write. Entries still queued when a
worker stops are lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

from ..conf import mcp_settings
from ..redaction import redact, redacted_names
from ..threads import in_thread


if TYPE_CHECKING:
    from ..hooks import ToolCall
    from ..protocol.context import RequestContext


logger = logging.getLogger("django_mcp.tools")

FLUSH_SECONDS = 0.25
BATCH_SIZE = 200
ROWS_PER_STATEMENT = 1000


def _redacted_names() -> frozenset[str]:
    """``CALL_LOG_REDACT`` as a lower-case set, made again only when the setting changes."""
    return redacted_names(mcp_settings.CALL_LOG_REDACT)


def _user_model() -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model()


def client_name(auth: Any) -> str:
    """The OAuth client behind a token (its name, else its id); blank for other credentials."""
    application = getattr(auth, "application", None)
    if application is None:
        return ""
    return str(getattr(application, "name", "") or getattr(application, "client_id", ""))[:200]


def record_call(sender: Any, call: ToolCall, outcome: str, message: str, duration_ms: float,
                **kwargs: Any) -> None:
    """The receiver of :data:`~django_mcp.signals.tool_called`: a line in the call log."""
    call_log.record(sender, call.tool.name, call.arguments if call.record_arguments else None, call.request,
                    outcome, message, duration_ms)


async def flush_call_log(sender: Any, **kwargs: Any) -> None:
    """The receiver of :data:`~django_mcp.signals.flush_requested`: save the queued entries now."""
    await call_log.flush()


def switch_call_log(on: bool) -> None:
    """
    Connect :func:`record_call` to :data:`~django_mcp.signals.tool_called` while
    ``DJANGO_MCP["CALL_LOG"]`` is on, and disconnect it while it is off (followed by
    ``apps.ready``: :func:`~django_mcp.conf.follow_setting`).
    """
    from ..signals import tool_called

    if on:
        tool_called.connect(record_call, dispatch_uid="django_mcp_call_log")
    else:
        tool_called.disconnect(record_call, dispatch_uid="django_mcp_call_log")


class CallLog:
    """
    A per-worker queue of call-log entries, saved in batches by a task on the event loop.

    A call only appends an :class:`Entry` of what it already holds (about a microsecond on the event loop):
    the user's name, the OAuth client, the redaction and the JSON of the arguments are worked out
    by the thread that saves the batch, which needs about 20 us of CPU a row on SQLite
    (benchmarks/tool_admin.py, "Tool admin cost").
    """

    def __init__(self) -> None:
        self.pending: list[Entry] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.wakeup: asyncio.Event | None = None

    def record(self, site: Any, tool: str, arguments: dict[str, Any] | None, ctx: RequestContext, outcome: str,
               message: str, duration_ms: float) -> None:
        """Queue an entry; ``arguments`` None: this call's arguments are not logged."""
        # The arguments are the call's own dict: a tool that keeps and changes it afterwards would
        # change what is logged, as it would with any later copy.
        self.pending.append(Entry(getattr(site, "name", "default"), tool, ctx.user, ctx.auth, arguments, outcome,
                                  message, duration_ms, ctx.protocol_version, ctx.transport, time.time()))
        task = self.task
        if task is None or task.done() or self.loop is not asyncio.get_running_loop():
            self._start()
        if len(self.pending) >= BATCH_SIZE and self.wakeup is not None:
            self.wakeup.set()

    def _start(self) -> None:
        self.loop = loop = asyncio.get_running_loop()
        self.wakeup = asyncio.Event()
        self.task = loop.create_task(self._run())

    async def _run(self) -> None:
        # A process may run more than one loop (the plain view's own under WSGI beside another):
        # the writer started on the loop that recorded last is the one; an earlier one, on another
        # loop, stops instead of saving entries at the same time from the wrong thread.
        me, wakeup = asyncio.current_task(), self.wakeup
        assert wakeup is not None
        while self.task is me:
            try:
                await asyncio.wait_for(wakeup.wait(), FLUSH_SECONDS)
            except asyncio.TimeoutError:
                pass
            wakeup.clear()
            if self.task is me:
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


class Entry(NamedTuple):
    """What :meth:`CallLog.record` queues for a call: only what the request already holds."""

    site: str
    tool: str
    user: Any
    auth: Any
    arguments: dict[str, Any] | None  # None: this tool's arguments are not logged
    outcome: str
    message: str
    duration_ms: float
    protocol_version: str | None
    transport: str | None
    time: float


#: The call log's columns, in the order :func:`_row` gives them.
COLUMNS = ("site", "tool", "user_id", "username", "client", "arguments", "outcome", "message", "duration_ms",
           "protocol_version", "transport", "created")


# One encoder for every row: json.dumps with a ``default`` builds a new encoder per call.
_encode_arguments = json.JSONEncoder(default=str).encode


def _row(entry: Entry, user_model: type, names: frozenset[str], adapt_time: Any) -> tuple[Any, ...]:
    """One queued entry as the values of :data:`COLUMNS`."""
    site, tool, user, auth, arguments, outcome, message, duration_ms, version, transport, when = entry
    user_id, username = None, ""
    if user is not None and getattr(user, "is_authenticated", False):
        if isinstance(user, user_model):  # a foreign key only to a real user row
            user_id, username = user.pk, user.get_username()
        else:
            username = str(user)
    return (site, tool, user_id, username, client_name(auth),
            None if arguments is None else _encode_arguments(redact(arguments, names)), outcome, message,
            round(duration_ms, 3), version or "", transport or "",
            adapt_time(datetime.fromtimestamp(when, timezone.utc)))


@in_thread
def _save(batch: list[Entry]) -> None:
    """
    Multi-row ``INSERT`` statements, as few as the database's parameter limit allows, in one
    transaction: a few statements per batch rather than a driver step (and a release of the
    interpreter lock) per row, and one round trip per statement on PostgreSQL. Not
    ``bulk_create``: building a model instance and compiling its values per row took 120-240 us
    of the worker's one core per call (benchmarks/tool_admin.py).
    """
    from django.db import connections, router, transaction

    from .models import McpToolCall

    alias = router.db_for_write(McpToolCall)
    connection = connections[alias]
    user_model, names, adapt_time = _user_model(), _redacted_names(), connection.ops.adapt_datetimefield_value
    rows = []
    for entry in batch:
        try:
            rows.append(_row(entry, user_model, names, adapt_time))
        except Exception:  # one entry that cannot be shaped (an odd user object) costs only itself
            logger.warning("Could not record a call of %s", entry.tool, exc_info=True)
    if not rows:
        return
    meta = McpToolCall._meta
    fields = [meta.get_field(name) for name in COLUMNS]
    quote = connection.ops.quote_name
    head = f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) VALUES "
    row_placeholders = "(" + ", ".join(["%s"] * len(COLUMNS)) + ")"
    # The backend's own limit (SQLite: 999 parameters), and never more than ROWS_PER_STATEMENT: a
    # flush takes everything queued, which a slow database lets grow past BATCH_SIZE, and
    # PostgreSQL with server-side binding takes at most 65,535 parameters a statement.
    per_statement = max(1, min(connection.ops.bulk_batch_size(fields, rows), ROWS_PER_STATEMENT))
    # One transaction per batch: in autocommit every statement would be a commit of its own.
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        for start in range(0, len(rows), per_statement):
            chunk = rows[start:start + per_statement]
            cursor.execute(head + ", ".join([row_placeholders] * len(chunk)),
                           [value for row in chunk for value in row])


call_log = CallLog()


def prune_call_log(sender: Any = None, **kwargs: Any) -> str:
    """
    Delete tool calls older than ``CALL_LOG_RETENTION_DAYS`` (None keeps them all); a receiver
    of :data:`~django_mcp.signals.clearing_expired`, so ``mcp_clearsessions`` prunes the log.
    """
    days = mcp_settings.CALL_LOG_RETENTION_DAYS
    deleted = 0
    if days is not None:
        from django.utils import timezone as django_timezone

        from .models import McpToolCall

        cutoff = django_timezone.now() - timedelta(days=days)
        deleted, _ = McpToolCall.objects.filter(created__lt=cutoff).delete()
    return f"{deleted} old tool calls"
