"""
A task as each era puts it on the wire.

2025-11-25 (MCP spec 2025-11-25, basic/utilities/tasks): ``Task`` is ``taskId``, ``status``,
``statusMessage``, ``createdAt``, ``lastUpdatedAt``, ``ttl`` and ``pollInterval`` (milliseconds);
``CreateTaskResult`` wraps it in ``task``.

2026-07-28 (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663, "Task" and "DetailedTask"):
the same with ``ttlMs`` and ``pollIntervalMs``, flat in a ``CreateTaskResult`` with ``resultType:
"task"``; ``tasks/get`` gives the *detailed* task: its ``inputRequests`` while it waits for input,
its ``result`` once completed, its ``error`` once failed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..conf import mcp_settings
from .models import McpTask


#: The extension's identifier (SEP-2663).
EXTENSION = "io.modelcontextprotocol/tasks"
def task_group(task_id: str) -> str:
    """The channel-layer group of one task's status changes (its ids are URL-safe base64, valid in a name)."""
    return f"mcp.task.{task_id}"


#: ``_meta`` key tying a 2025-11-25 message to its task (MCP spec 2025-11-25, basic/utilities/tasks,
#: "Related Task Metadata").
RELATED_TASK = "io.modelcontextprotocol/related-task"


def timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC, to the millisecond."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _task(task: McpTask, ttl_key: str, interval_key: str) -> dict[str, Any]:
    body: dict[str, Any] = {"taskId": task.id, "status": task.status}
    if task.status_message:
        body["statusMessage"] = task.status_message
    body.update({"createdAt": timestamp(task.created), "lastUpdatedAt": timestamp(task.last_updated),
                 ttl_key: task.ttl_ms})
    interval = mcp_settings.TASK_POLL_INTERVAL_MS
    if interval:
        body[interval_key] = interval
    return body


def legacy_task(task: McpTask) -> dict[str, Any]:
    """The 2025-11-25 ``Task``: ``ttl`` and ``pollInterval``."""
    return _task(task, "ttl", "pollInterval")


def modern_task(task: McpTask) -> dict[str, Any]:
    """The 2026-07-28 ``Task`` (without the detail of :func:`detailed_task`): ``ttlMs`` and ``pollIntervalMs``."""
    return _task(task, "ttlMs", "pollIntervalMs")


def detailed_task(task: McpTask, shaped_result: dict[str, Any] | None) -> dict[str, Any]:
    """
    The 2026-07-28 ``DetailedTask``: every question still open while ``input_required``, the
    call's result (``shaped_result``: what ``tools/call`` would have answered) once completed, the
    JSON-RPC error once failed.
    """
    body = modern_task(task)
    if task.status == McpTask.INPUT_REQUIRED:
        body["inputRequests"] = dict(task.input_requests)
    elif task.status == McpTask.COMPLETED and shaped_result is not None:
        body["result"] = shaped_result
    elif task.status == McpTask.FAILED:
        body["error"] = task.error or {"code": -32603, "message": task.status_message or "The task failed"}
    return body
