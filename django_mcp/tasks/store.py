"""
Reading and changing task rows, so that concurrent writers — the running work, ``tasks/update``
and ``tasks/cancel`` on any worker, the reaper — never undo one another: a terminal status is
final (MCP spec 2025-11-25, basic/utilities/tasks, "Task Status Lifecycle"), answers are recorded
in one transaction with the questions they answer, and a task is only ever seen by its owner.

Every query runs through :func:`~django_mcp.threads.in_database_thread`, as django_mcp's own
stores do, with Django's connection handling around it: the async ORM would run in the request's
own thread (each request has one, for thread-sensitive code) and leave that thread's connection
open when the request ends — a connection per ``tasks/get``, until the database refused more.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import secrets
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from django.contrib.auth import get_user_model
from django.core.signals import setting_changed
from django.db import connections, router, transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from ..conf import mcp_settings
from ..stores import session_sql
from ..threads import in_database_thread
from .models import McpTask


Result = TypeVar("Result")

#: While the task framework's worker process runs a task's work (runner.work): the worker's own
#: thread, as an executor, where the work's queries run.
worker_thread: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("django_mcp_worker_thread",
                                                                              default=None)


def in_db(fn: Callable[..., Result], *, idempotent: bool = False) -> Callable[..., Any]:
    """An awaitable twin of the sync query ``fn`` (see the module docstring)."""

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> Result:
        worker = worker_thread.get()
        if worker is not None:
            # In the task framework's worker (runner.work): on the worker's own thread and
            # connection, which it checks and closes around each task as Django does around a
            # request, not on a pool thread (and connection) per query.
            return await asyncio.get_running_loop().run_in_executor(worker, functools.partial(fn, *args, **kwargs))
        hop = _hops.get(fn)
        if hop is None:
            hop = _hops[fn] = in_database_thread(fn, McpTask, idempotent=idempotent)  # made once: it reads the settings
        return await hop(*args, **kwargs)

    run.sync = fn  # type: ignore[attr-defined]
    return run


def read_in_db(fn: Callable[..., Result]) -> Callable[..., Any]:
    """:func:`in_db` for a query that only reads: its statement is its connection's health check."""
    return in_db(fn, idempotent=True)


# Each in_db function's in_database_thread twin, forgotten when DATABASES changes (tests): the
# engine decides its thread.
_hops: dict[Callable[..., Any], Callable[..., Any]] = {}


def _forget_hops(*, setting: str, **kwargs: Any) -> None:
    if setting == "DATABASES":
        _hops.clear()


setting_changed.connect(_forget_hops)


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
    Whether the process that holds the task has not written its heartbeat for three
    ``TASK_HEARTBEAT_SECONDS``: it is gone. The work holds a task while it runs (a process killed
    mid-task; the task framework's database backend leaves such work ``RUNNING`` for ever), and the
    web worker that made it, or started it again, holds it until it has handed it over — to the
    task framework's queue (:func:`queued`, which lets go) or to its own event loop (:func:`claim`).
    A task waiting in the queue has no heartbeat: nobody holds it, and nothing is lost.
    """
    if task.is_terminal or task.heartbeat is None:
        return False
    beat = mcp_settings.TASK_HEARTBEAT_SECONDS or 10
    return timezone.now() - task.heartbeat >= timedelta(seconds=3 * beat)


def expired(task: McpTask) -> bool:
    return task.expires is not None and task.expires <= timezone.now()


def expiry_for(ttl_ms: int | None) -> Any:
    return None if ttl_ms is None else timezone.now() + timedelta(milliseconds=ttl_ms)


def owned_by(owner: Owner) -> Any:
    """
    The rows that count as ``owner``'s own, for listing and limits: an anonymous client's are
    those of its session (none for 2026-07-28 clients, whose tasks are reached by id only).
    """
    rows = McpTask.objects.filter(owner=owner.key, client=owner.client)
    if owner.key == "anonymous":
        rows = rows.filter(session=owner.session)
    return rows


@read_in_db
def get(task_id: str) -> McpTask | None:
    """The row, whoever owns it (for the work itself and the reaper)."""
    return session_sql.read(McpTask, task_id)  # type: ignore[return-value]


@read_in_db
def visible_task(task_id: Any, owner: Owner) -> McpTask | None:
    """The task, if it exists, has not expired and ``owner`` may see it; else None (all alike)."""
    if not isinstance(task_id, str) or not task_id or len(task_id) > 64:
        return None
    # One prepared statement: tasks/get, polled by every client of a working task, is this read.
    task: McpTask | None = session_sql.read(McpTask, task_id)  # type: ignore[assignment]
    if task is None or not owner.may_see(task) or expired(task):
        return None
    return task


@read_in_db
def active_count(owner: Owner) -> int:
    """
    Tasks of ``owner`` working or waiting for input and not expired (``MAX_TASKS_PER_USER``).
    Anonymous legacy clients count per session; anonymous 2026-07-28 clients, which have none,
    share one count.
    """
    return owned_by(owner).filter(status__in=McpTask.ACTIVE).exclude(expires__lte=timezone.now()).count()


@read_in_db
def page(owner: Owner, offset: int, size: int) -> list[McpTask]:
    """``size`` of the owner's unexpired tasks from ``offset``, newest first."""
    return list(owned_by(owner).exclude(expires__lte=timezone.now()).order_by("-created", "id")[offset:offset + size])


@in_db
def create(**fields: Any) -> McpTask:
    """The task's row, held by the web worker making it (its heartbeat) until its work is handed over."""
    fields.setdefault("heartbeat", fields.get("created") or timezone.now())
    return _insert(McpTask(**fields))


def _insert(task: McpTask) -> McpTask:
    # One INSERT of every column, without the ORM compiling it anew for each task (stores/session_sql.py).
    session_sql.insert(McpTask, {field.name: getattr(task, field.attname) for field in McpTask._meta.concrete_fields})
    task._state.adding = False
    task._state.db = router.db_for_write(McpTask)
    return task


@in_db
def create_queued(enqueue: Callable[[str], Any], fields: dict[str, Any]) -> McpTask:
    """
    The task's row and its work's place in the queue, in one transaction: for a queue kept in the
    same database (django-tasks-db's), which no ``db_worker`` sees before both are committed. No
    process holds the task meanwhile (no heartbeat), and one commit instead of three.
    """
    with transaction.atomic(using=router.db_for_write(McpTask)):
        enqueued = enqueue(fields["id"])
        return _insert(McpTask(backend_id=str(enqueued.id)[:64], heartbeat=None, **fields))


@in_db
def create_then_queue(enqueue: Callable[[str], Any], fields: dict[str, Any]) -> McpTask:
    """
    The task's row, held by this worker (its heartbeat), then its work queued elsewhere (RQ,
    Celery: a queue whose worker may start before a transaction of ours commits), then let go
    (:func:`queued`); in one trip to the database thread.
    """
    task = create.sync(**fields)
    enqueued = enqueue(task.id)
    queued.sync(task.id, str(enqueued.id))
    task.backend_id = str(enqueued.id)[:64]
    return task


@in_db
def change(task_id: str, *, only_if_active: bool = True, **fields: Any) -> bool:
    """
    Update a task unless it has ended (a terminal status never changes); whether it changed.
    ``last_updated`` follows.
    """
    fields.setdefault("last_updated", timezone.now())
    return _update(task_id, fields, active_only=only_if_active) > 0


@in_db
def beat(task_id: str) -> None:
    """The running work's heartbeat."""
    McpTask.objects.filter(pk=task_id, status__in=McpTask.ACTIVE).update(heartbeat=timezone.now())


@in_db
def claim(task_id: str) -> McpTask | None:
    """Mark the task's work started (not one cancelled or ended meanwhile); the row, or None."""
    now = timezone.now()
    values = {"started": now, "heartbeat": now, "last_updated": now}
    if session_sql.returns_from_update(connections[router.db_for_write(McpTask)]):
        claimed: McpTask | None = _update(task_id, values, active_only=True, not_cancelled=True, count_attempt=True,
                                          returning=True)
        return claimed
    if not _update(task_id, values, active_only=True, not_cancelled=True, count_attempt=True):
        return None
    return session_sql.read(McpTask, task_id)  # type: ignore[return-value]


# The UPDATEs each task's work makes (claim, progress, finish), as SQL kept per database and set of
# columns rather than compiled by the ORM for every task: a db_worker's time per short task was
# mostly that compiling (see stores/session_sql.py for the same with sessions).
_updates: dict[tuple[str, str, tuple[str, ...], bool, bool, bool, bool], str] = {}


def _update(task_id: str, values: dict[str, Any], *, active_only: bool, not_cancelled: bool = False,
            count_attempt: bool = False, returning: bool = False) -> Any:
    """
    ``UPDATE`` the row ``task_id`` with ``values`` (field name → Python value): the rows changed
    (0 or 1), or with ``returning``, the row as changed or None, in the same statement.
    """
    connection = connections[router.db_for_write(McpTask)]
    meta = McpTask._meta
    fields = [meta.get_field(name) for name in values]
    key = (connection.alias, connection.vendor, tuple(values), active_only, not_cancelled, count_attempt, returning)
    sql = _updates.get(key)
    if sql is None:
        quote = connection.ops.quote_name
        assignments = [f"{quote(field.column)} = %s" for field in fields]
        if count_attempt:
            assignments.append(f"{quote('attempts')} = {quote('attempts')} + 1")
        sql = f"UPDATE {quote(meta.db_table)} SET {', '.join(assignments)} WHERE {quote(meta.pk.column)} = %s"
        if active_only:
            sql += f" AND {quote('status')} IN ({', '.join(['%s'] * len(McpTask.ACTIVE))})"
        if not_cancelled:
            sql += f" AND {quote('cancel_requested')} = %s"
        if returning:
            sql += f" RETURNING {session_sql.columns(McpTask, connection)}"
        _updates[key] = sql
    params = [field.get_db_prep_save(values[field.name], connection) for field in fields]
    params.append(task_id)
    if active_only:
        params.extend(McpTask.ACTIVE)
    if not_cancelled:
        params.append(meta.get_field("cancel_requested").get_db_prep_save(False, connection))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if not returning:
            return cursor.rowcount
        rows = cursor.fetchall()
    return session_sql.instance(McpTask, connection, rows[0]) if rows else None


@in_db
def stop_signal(task_id: str) -> tuple[bool, bool]:
    """(stop, expired): whether the work must stop — cancelled, deleted or past its TTL — and whether it expired."""
    row = McpTask.objects.filter(pk=task_id).values("cancel_requested", "expires").first()
    if row is None:
        return True, False
    past = row["expires"] is not None and row["expires"] <= timezone.now()
    return bool(row["cancel_requested"]) or past, past


@in_db
def cancel(task: McpTask) -> bool:
    """Mark an active task cancelled, and its work asked to stop; False when it had already ended."""
    now = timezone.now()
    return McpTask.objects.filter(pk=task.id, status__in=McpTask.ACTIVE).update(
        status=McpTask.CANCELLED, cancel_requested=True, status_message="Cancelled by the client",
        input_requests={}, last_updated=now, finished=now) > 0


@in_db
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


@in_db
def lost_again(task: McpTask, *, retry: bool, message: str) -> bool:
    """
    For the reaper: start a lost task over (``retry``) or end it failed, unless someone else
    already did (its heartbeat is no longer the one the reaper read); whether this call did.
    """
    rows = McpTask.objects.filter(pk=task.id, status__in=McpTask.ACTIVE, heartbeat=task.heartbeat)
    now = timezone.now()
    if retry:
        # Held by this process now (a fresh heartbeat) until it has queued the work again: should it
        # die first, the task is found lost once more rather than waiting for its TTL.
        return rows.update(started=None, heartbeat=now, status=McpTask.WORKING, input_requests={},
                           status_message=message, last_updated=now) > 0
    return rows.update(status=McpTask.FAILED, status_message=message, error={"code": -32603, "message": message},
                       input_requests={}, finished=now, last_updated=now) > 0


@read_in_db
def overdue(limit: int | None = None) -> list[McpTask]:
    """Active tasks whose heartbeat is overdue, longest silent first (at most ``limit``)."""
    cutoff = timezone.now() - timedelta(seconds=3 * (mcp_settings.TASK_HEARTBEAT_SECONDS or 10))
    rows = McpTask.objects.filter(status__in=McpTask.ACTIVE, heartbeat__lt=cutoff).order_by("heartbeat")
    return list(rows if limit is None else rows[:limit])


@read_in_db
def any_active() -> bool:
    """Whether any task, anywhere, is working or waiting for input (the sweeper stops when none is)."""
    return McpTask.objects.filter(status__in=McpTask.ACTIVE).exists()


@in_db
def queued(task_id: str, backend_id: str) -> None:
    """
    The task's work is in the task framework's queue, under ``backend_id``: the web worker that
    queued it lets go of it (no heartbeat) unless its work has already started (a ``db_worker``
    quicker than this update), whose heartbeat is the work's own.
    """
    McpTask.objects.filter(pk=task_id).update(backend_id=backend_id[:64], heartbeat=Case(
        When(started__isnull=True, then=Value(None)), default=F("heartbeat")))


@read_in_db
def user_for(owner: str) -> Any:
    """The active user a task belongs to, or None (anonymous, or no longer there)."""
    if not owner.startswith("user:"):
        return None
    found = get_user_model()._default_manager.filter(pk=owner[5:]).first()
    return found if found is not None and found.is_active else None


@in_db
def purge_expired() -> int:
    """Delete tasks past their expiry (``mcp_clearsessions``); how many."""
    deleted, _ = McpTask.objects.filter(expires__lte=timezone.now()).delete()
    return deleted
