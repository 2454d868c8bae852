"""
Reading and changing task rows, so that concurrent writers — the running work, ``tasks/update``
and ``tasks/cancel`` on any worker, the reaper — never undo one another: a terminal status is
final (MCP spec 2025-11-25, basic/utilities/tasks, "Task Status Lifecycle"), answers are recorded
in one transaction with the questions they answer, and a task is only ever seen by its owner.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.utils import timezone

from ..conf import mcp_settings
from .models import McpTask


def new_task_id() -> str:
    """192 random bits, URL-safe: unguessable, and plain ASCII for the ``Mcp-Name`` header."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class Owner:
    """
    Who a task belongs to: the principal, the OAuth client it came through, and for anonymous
    legacy clients their session (the only thing that tells one anonymous client from another).
    """

    key: str
    client: str = ""
    session: str = ""

    def may_see(self, task: McpTask) -> bool:
        if task.owner != self.key or task.client != self.client:
            return False
        return not task.session or task.owner != "anonymous" or task.session == self.session


def heartbeat_lost(task: McpTask) -> bool:
    """
    Whether the task's work started but has not written its heartbeat for three
    ``TASK_HEARTBEAT_SECONDS``: its worker is gone (a process killed mid-task; the task framework's
    database backend leaves such work ``RUNNING`` for ever).
    """
    if task.is_terminal or task.started is None or task.heartbeat is None:
        return False
    beat = mcp_settings.TASK_HEARTBEAT_SECONDS or 10
    return timezone.now() - task.heartbeat >= timedelta(seconds=3 * beat)


def expired(task: McpTask) -> bool:
    return task.expires is not None and task.expires <= timezone.now()


async def visible_task(task_id: Any, owner: Owner) -> McpTask | None:
    """The task, if it exists, has not expired and ``owner`` may see it; else None (all alike)."""
    if not isinstance(task_id, str) or not task_id or len(task_id) > 64:
        return None
    task = await McpTask.objects.filter(pk=task_id).afirst()
    if task is None or not owner.may_see(task) or expired(task):
        return None
    return task


async def active_count(owner: Owner) -> int:
    """
    Tasks of ``owner`` working or waiting for input and not expired (``MAX_TASKS_PER_USER``).
    Anonymous legacy clients count per session; anonymous 2026-07-28 clients, which have none,
    share one count.
    """
    rows = owned_by(owner).filter(status__in=McpTask.ACTIVE).exclude(expires__lte=timezone.now())
    return await rows.acount()


def owned_by(owner: Owner) -> Any:
    """
    The rows that count as ``owner``'s own, for listing and limits: an anonymous client's are
    those of its session (none for 2026-07-28 clients, whose tasks are reached by id only).
    """
    rows = McpTask.objects.filter(owner=owner.key, client=owner.client)
    if owner.key == "anonymous":
        rows = rows.filter(session=owner.session)
    return rows


def expiry_for(ttl_ms: int | None) -> Any:
    return None if ttl_ms is None else timezone.now() + timedelta(milliseconds=ttl_ms)


async def change(task_id: str, *, only_if_active: bool = True, **fields: Any) -> bool:
    """
    Update a task unless it has ended (a terminal status never changes); whether it changed.
    ``last_updated`` follows.
    """
    rows = McpTask.objects.filter(pk=task_id)
    if only_if_active:
        rows = rows.filter(status__in=McpTask.ACTIVE)
    return await rows.aupdate(last_updated=timezone.now(), **fields) > 0


async def cancel(task: McpTask) -> bool:
    """Mark an active task cancelled, and its work asked to stop; False when it had already ended."""
    now = timezone.now()
    return await McpTask.objects.filter(pk=task.id, status__in=McpTask.ACTIVE).aupdate(
        status=McpTask.CANCELLED, cancel_requested=True, status_message="Cancelled by the client",
        input_requests={}, last_updated=now, finished=now) > 0


@sync_to_async
def record_answers(task_id: str, responses: dict[str, Any]) -> None:
    """
    Record answers to the questions the task waits on, in one transaction: keys not outstanding
    are ignored (SEP-2663, "Task Update Requests": never asked, answered already, or superseded),
    an answered question is no longer outstanding, and the task is ``working`` again once none is.
    Done before the acknowledgement, so a ``tasks/get`` right after sees it.
    """
    with transaction.atomic():
        task = McpTask.objects.select_for_update().filter(pk=task_id).first()
        if task is None or task.status != McpTask.INPUT_REQUIRED:
            return
        outstanding = dict(task.input_requests)
        answered = {key: value for key, value in responses.items() if key in outstanding}
        if not answered:
            return
        for key in answered:
            del outstanding[key]
        task.input_requests = outstanding
        task.input_answers = {**task.input_answers, **answered}
        if not outstanding:
            task.status, task.status_message = McpTask.WORKING, ""
        task.last_updated = timezone.now()
        task.save(update_fields=["input_requests", "input_answers", "status", "status_message", "last_updated"])


async def purge_expired() -> int:
    """Delete tasks past their expiry (``mcp_clearsessions``); how many."""
    deleted, _ = await McpTask.objects.filter(expires__lte=timezone.now()).adelete()
    return deleted
