"""
Running a task's work, apart from the request that made it.

:func:`start` hands the work to Django's task framework (``DJANGO_MCP["TASK_BACKEND"]``, an alias
of ``TASKS``): with a backend that runs work in other processes — django-tasks-db's database
backend and its ``db_worker``, RQ, Celery — the task survives the web worker that made it. With the
immediate backend (Django's default) or none, the work runs as a background task of the web
worker's event loop instead: the client still gets its task handle at once, but the work is lost
if that process stops.

Wherever it runs, :func:`run` does the same: it claims the task, looks the tool up again as its
owner (the tool's permission classes and the hooks are asked again when the work starts), and
runs it with a ``Context`` whose questions to the client (``ctx.elicit()``, ``ctx.request_input()``)
are answered the 2026-07-28 way whatever the client's revision (MCP spec 2026-07-28,
basic/patterns/mrtr): a question not answered yet parks the task in ``input_required`` with the
question in its row, and once the client has answered every one (``tasks/update``, or its answers
to the requests ``tasks/result`` relays in 2025-11-25) the tool runs again from the start with the
answers known. Progress updates the status message; cancellation (``tasks/cancel`` on any
worker) reaches the work at its next ``await``, within half a second; the work writes a heartbeat
so that a task whose process was killed is noticed (:func:`reap_if_lost`).
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import logging
import time
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.signals import setting_changed
from django.utils import timezone

from ..conf import mcp_settings
from ..fanout import NOTIFY, publish, publish_to_session
from ..hooks import run_deferred
from ..protocol import jsonrpc
from ..protocol.context import RequestContext
from ..protocol.errors import InternalError, McpError
from ..protocol.input import InputRequired
from ..protocol.versions import META_SERVER_INFO, Era, at_least
from ..sites import site_named
from ..threads import in_database_thread
from . import compat, store, worker_loop
from .models import McpTask
from .wire import detailed_task, legacy_task, task_group


logger = logging.getLogger("django_mcp.tasks")

# How often running work looks for a cancellation, and a waiting task for answers (seconds).
POLL_SECONDS = 0.25
# How often a progress report may rewrite the status message (seconds).
PROGRESS_EVERY = 0.5
# Runs of one task at most, counting those after its worker was lost (idempotent tools only).
MAX_ATTEMPTS = 3

#: The id of the task whose work this coroutine runs, if any (the task hook lets it through).
running_task: contextvars.ContextVar[str | None] = contextvars.ContextVar("django_mcp_running_task", default=None)
# Work running in this process's event loop (no durable backend): held, as the loop holds tasks weakly.
_in_process: set[asyncio.Task[Any]] = set()


class TaskCredential:
    """What the work runs with in place of the request's credential: its scopes and OAuth client."""

    def __init__(self, scopes: list[str], client: str) -> None:
        self.scopes = frozenset(scopes)
        self.client = client


def durable() -> bool:
    """Whether tasks go to a backend that runs them in other processes (and survive this one)."""
    return _plan() != HERE


HERE, SAME_DATABASE, ELSEWHERE = "here", "same database", "elsewhere"


def _plan() -> str:
    """
    Where the configured backend runs work — in this process (``HERE``), in other processes from
    a queue in the task rows' own database (``SAME_DATABASE``) or from one elsewhere
    (``ELSEWHERE``) — worked out once per backend, not for every task.
    """
    alias = mcp_settings.TASK_BACKEND
    found = _plans.get(alias)
    if found is None:
        if not (alias and compat.AVAILABLE and compat.runs_elsewhere(alias)):
            found = HERE
        else:
            found = SAME_DATABASE if compat.queues_in_database_of(alias, McpTask) else ELSEWHERE
        _plans[alias] = found
    return found


_plans: dict[Any, str] = {}


async def create_and_start(**fields: Any) -> McpTask:
    """
    Make the task's row and have its work run (see the module docstring), in as few trips to the
    database as each backend allows: with the queue in the same database, the row and the queue
    entry in one transaction; with a queue elsewhere, the row, the enqueue and its id in one trip;
    in this process, the row written as already claimed, so the work starts without another query.
    """
    plan = _plan()
    if plan == SAME_DATABASE:
        return await store.create_queued(_enqueue(), fields)
    if plan == ELSEWHERE:
        return await store.create_then_queue(_enqueue(), fields)
    now = fields.get("created") or timezone.now()
    task = await store.create(**{**fields, "started": now, "heartbeat": now, "attempts": 1})
    _run_here(task.id, copy.copy(task))  # its own copy: the work changes it while the answer is written
    return task


async def start(task: McpTask) -> None:
    """Have the work of an existing task run again (the reaper): queued, or in this process."""
    if durable():
        enqueued = await in_database_thread(_enqueue(), McpTask)(task.id)
        await store.queued(task.id, str(enqueued.id))
        return
    _run_here(task.id)


def _enqueue() -> Any:
    # enqueue, not aenqueue: that would write the queue's row from the request's own thread, whose
    # connection nobody closes (store.py). using() makes a new Task each time: kept per alias.
    alias = mcp_settings.TASK_BACKEND
    found = _enqueuers.get(alias)
    if found is None:
        found = _enqueuers[alias] = work.using(backend=alias).enqueue
    return found


_enqueuers: dict[str, Any] = {}


def _forget_enqueuers(*, setting: str, **kwargs: Any) -> None:
    if setting in ("TASKS", "DJANGO_MCP", "DATABASES", "DATABASE_ROUTERS"):
        _enqueuers.clear()
        _plans.clear()


setting_changed.connect(_forget_enqueuers)


def _run_here(task_id: str, claimed: McpTask | None = None) -> None:
    running = asyncio.get_running_loop().create_task(run(task_id, claimed))
    _in_process.add(running)
    running.add_done_callback(_in_process.discard)


def work(task_id: str) -> None:
    """The task framework's entry point: a plain function, which every backend can run."""
    worker_loop.run_in_worker(lambda: run(task_id))


if compat.AVAILABLE:
    # The queue names the work by this module's attribute, which must be the Task itself.
    work = compat.task()(work)  # type: ignore[assignment]


async def run(task_id: str, claimed: McpTask | None = None) -> None:
    """
    Claim the task and run its work to an end (a no-op for a task ended or claimed meanwhile);
    ``claimed``: the row as made already claimed by this process (:func:`create_and_start`).
    """
    task = claimed if claimed is not None else await store.claim(task_id)
    if task is None:
        return
    site = site_named(task.site)
    if site is None:
        await finish(task, McpTask.FAILED, error=InternalError(
            f"The site {task.site!r} is not loaded in the process that runs tasks").to_error())
        return
    token = running_task.set(task_id)
    try:
        user = await _user(task.owner)
        await run_deferred(site, "tools/call", task.tool, task.id, task.carried or {},
                           lambda: _drive(task, site, user))
    except Exception:
        logger.exception("Task %s of tool %s failed", task.id, task.tool)
        await finish(task, McpTask.FAILED, error=InternalError().to_error())
    finally:
        running_task.reset(token)


async def _drive(task: McpTask, site: Any, user: Any) -> None:
    answers = dict(task.input_answers)
    while True:
        ctx = _context(task, user, answers)
        call = asyncio.ensure_future(site.call_tool(task.tool, task.arguments, ctx))
        if not await _watch(task.id, call):
            return  # cancelled: the row says so already
        try:
            result = call.result()
        except InputRequired as needed:
            answers = await _wait_for_answers(task, needed.requests)
            if answers is None:
                return
            continue
        except McpError as exc:
            await finish(task, McpTask.FAILED, error=exc.to_error(), message=exc.message)
            return
        # A tool's own failure (isError) is a completed task in 2026-07-28 (SEP-2663, "Task
        # Status"), a failed one in 2025-11-25 (MCP spec 2025-11-25, basic/utilities/tasks, "Task
        # Execution Errors"); tasks/result gives the same result either way.
        failed = bool(result.get("isError")) and not _modern(task)
        await finish(task, McpTask.FAILED if failed else McpTask.COMPLETED, result=result,
                     message="The tool reported an error" if result.get("isError") else "")
        return


def _modern(task: McpTask) -> bool:
    return at_least(task.protocol_version, "2026-07-28")


def _context(task: McpTask, user: Any, answers: dict[str, Any]) -> RequestContext:
    credential = None if task.scopes is None else TaskCredential(task.scopes, task.client)
    return RequestContext(
        era=Era.MODERN if _modern(task) else Era.LEGACY, protocol_version=task.protocol_version,
        client_capabilities=dict(task.client_capabilities or {}), user=user, auth=credential, method="tools/call",
        transport=task.transport or "streamable-http", rerun_for_input=True, input_answers=answers,
        progress_token=f"task:{task.id}", send_message=_ProgressWriter(task.id))


class _ProgressWriter:
    """Progress reports of the work become the task's status message (at most every half second)."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.last = 0.0

    async def __call__(self, message: dict[str, Any]) -> None:
        if message.get("method") != "notifications/progress":
            return  # log messages have nowhere to go: a task has no stream (SEP-2663)
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        params = message.get("params") or {}
        text = params.get("message") or (f"{params.get('progress')}/{params['total']}" if params.get("total")
                                         else f"{params.get('progress')}")
        await store.change(self.task_id, status_message=str(text)[:1000])


async def _watch(task_id: str, call: asyncio.Future[Any]) -> bool:
    """
    Wait for the work, looking for a cancellation every ``POLL_SECONDS`` and writing the heartbeat
    every ``TASK_HEARTBEAT_SECONDS``; False (the work stopped) once the task was cancelled.
    """
    beat = mcp_settings.TASK_HEARTBEAT_SECONDS or 10
    last_beat = time.monotonic()
    while True:
        done, _ = await asyncio.wait({call}, timeout=POLL_SECONDS)
        if done:
            return True
        stop, expired = await store.stop_signal(task_id)
        if stop:
            # Cancelled, deleted (mcp_clearsessions) or past its TTL, after which the server may
            # end it (SEP-2663, "Task Lifecycle"): the work stops at its next await.
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            if expired:
                await finish_by_id(task_id, McpTask.FAILED, error={
                    "code": -32603, "message": "The task ran past its time to live and was stopped"})
            return False
        if time.monotonic() - last_beat >= beat:
            last_beat = time.monotonic()
            await store.beat(task_id)


async def _wait_for_answers(task: McpTask, requests: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """
    Park the task in ``input_required`` with the questions it has not asked before, then wait
    until every one is answered; the answers known then, or None once the task ended (cancelled).
    """
    row = await store.get(task.id)
    if row is None or row.is_terminal:
        return None
    # A key is asked once in a task's life (SEP-2663, "Task Update Requests"): the same question
    # asked again on a re-run is still the one outstanding.
    questions = {key: spec for key, spec in requests.items() if key not in row.input_answers}
    asked = list(dict.fromkeys([*row.asked_keys, *questions]))
    if not await store.change(task.id, status=McpTask.INPUT_REQUIRED, input_requests=questions, asked_keys=asked,
                              status_message="Waiting for the client's input"):
        return None
    await notify(task.id)
    beat = mcp_settings.TASK_HEARTBEAT_SECONDS or 10
    last_beat = time.monotonic()
    while True:
        await asyncio.sleep(POLL_SECONDS)
        row = await store.get(task.id)
        if row is None or row.is_terminal or row.cancel_requested:
            return None
        if row.status == McpTask.WORKING:
            await notify(task.id)
            return dict(row.input_answers)
        if time.monotonic() - last_beat >= beat:
            last_beat = time.monotonic()
            await store.beat(task.id)


async def finish(task: McpTask, status: str, *, result: dict[str, Any] | None = None,
                 error: dict[str, Any] | None = None, message: str = "") -> None:
    """End the task (unless it ended meanwhile: a cancellation stays a cancellation) and tell its listeners."""
    await finish_by_id(task.id, status, result=result, error=error, message=message, row=task)


async def finish_by_id(task_id: str, status: str, *, result: dict[str, Any] | None = None,
                       error: dict[str, Any] | None = None, message: str = "", row: McpTask | None = None) -> None:
    if error is not None and not message:
        message = str(error.get("message", ""))
    now = timezone.now()
    ended = {"status": status, "result": result, "error": error, "status_message": message[:1000],
             "input_requests": {}, "finished": now, "last_updated": now}
    if await store.change(task_id, **ended):
        if row is None:
            await notify(task_id)
            return
        # The row as this update left it: every field a notification shows was just written, so
        # it is announced without reading the row back.
        for name, value in ended.items():
            setattr(row, name, value)
        await notify(row)


async def notify(task_id: str | McpTask) -> None:
    """
    Announce the task as it is now, on whichever worker the listeners are: ``notifications/tasks``
    with the detailed task to 2026-07-28 ``subscriptions/listen`` streams that follow it (SEP-2663,
    "Task Status Notifications"), and ``notifications/tasks/status`` to the GET stream of the legacy
    session that made it (MCP spec 2025-11-25, basic/utilities/tasks, "Task Status Notification").
    Optional for the server: clients poll, so a lost one costs nothing. Given the row as it is
    now, it announces that without reading it again.
    """
    task = task_id if isinstance(task_id, McpTask) else await store.get(task_id)
    if task is None:
        return
    task_id = task.id
    result = None
    if task.result is not None:
        # As tasks/get inlines it: the tools/call result with its resultType and the server's info.
        site = site_named(task.site)
        meta = {**(task.result.get("_meta") or {}), **({META_SERVER_INFO: site.server_info()} if site else {})}
        result = {"resultType": "complete", **task.result, **({"_meta": meta} if meta else {})}
    detailed = jsonrpc.notification("notifications/tasks", detailed_task(task, result))
    try:
        await publish(task_group(task.id), {"type": NOTIFY, "kind": "task", "taskId": task.id, "message": detailed})
        if task.session and not _modern(task):
            status = jsonrpc.notification("notifications/tasks/status", legacy_task(task))
            await publish_to_session(task.session, {"type": NOTIFY, "kind": "task", "taskId": task.id,
                                                    "message": status})
    except Exception:
        logger.warning("Could not announce the status of task %s", task_id, exc_info=True)


async def _user(owner: str) -> Any:
    found = await store.user_for(owner)
    return found if found is not None else AnonymousUser()


async def reap_if_lost(task: McpTask) -> McpTask:
    """
    A task whose worker is gone (:func:`~django_mcp.tasks.store.heartbeat_lost`) ends ``failed``
    with a message saying so — or, for a tool annotated ``idempotentHint`` (running it twice does
    no harm), starts again, up to ``MAX_ATTEMPTS`` runs. Called whenever a task is read, on any
    worker; the conditional update lets one reader act on it.
    """
    if not store.heartbeat_lost(task):
        return task
    if task.attempts < MAX_ATTEMPTS and _idempotent(task):
        if await store.lost_again(task, retry=True, message="Its worker stopped; started again"):
            await notify(task.id)
            await start(task)
    elif await store.lost_again(task, retry=False, message=(
            "The worker running this task stopped before it finished; call the tool again" if task.started else
            "The worker that made this task stopped before its work started; call the tool again")):
        await notify(task.id)
    return await store.get(task.id) or task


def _idempotent(task: McpTask) -> bool:
    site = site_named(task.site)
    tool = None if site is None else site.get_tool(task.tool)
    annotations = getattr(tool, "annotations", None) or {}
    return bool(annotations.get("idempotentHint"))


async def reap_lost() -> int:
    """Look at every task whose heartbeat is overdue (``mcp_clearsessions``); how many were."""
    tasks = await store.overdue()
    for task in tasks:
        await reap_if_lost(task)
    return len(tasks)
