"""
The ``tasks/*`` methods and the tasks capability, in both eras, through the core's protocol
extension seam.

2025-11-25 (MCP spec 2025-11-25, basic/utilities/tasks): capability ``tasks`` (``list``, ``cancel``,
``requests.tools.call``); ``tasks/get``, ``tasks/result`` (waits for the end, relaying the task's
questions to the client as requests tied to it by ``related-task`` metadata), ``tasks/list`` and
``tasks/cancel`` (``-32602`` for an ended task).

2026-07-28 (``io.modelcontextprotocol/tasks``, SEP-2663): the extension under
``capabilities.extensions``; ``tasks/get`` (the detailed task), ``tasks/update`` (answers to the
task's ``inputRequests``) and ``tasks/cancel`` (an acknowledgement, also for an ended task), each
refused ``-32021`` to a request that does not declare the extension, before the task is looked
up; ``Mcp-Name`` mirrors ``taskId``. ``tasks/result`` and ``tasks/list`` do not exist there (404).

Every method sees only the tasks of the requester (user, OAuth client, and for anonymous legacy
clients the session); any other id is ``-32602``, exactly like one that does not exist.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Mapping
from typing import Any

from ..protocol.context import RequestContext
from ..protocol.errors import InternalError, InvalidParams, McpError, MissingClientCapability
from ..protocol.extensions import ExtensionHandler, ExtensionResult, ProtocolExtension
from ..protocol.input import RESULT_MODEL_FOR_METHOD
from . import runner, store
from .hooks import legacy_tasks, owner_of
from .models import McpTask
from .sweeper import keep_sweeping
from .wire import EXTENSION, RELATED_TASK, detailed_task, legacy_task, task_group


PAGE_SIZE = 50
# Task ids one subscriptions/listen may follow.
MAX_FOLLOWED = 100
# How often tasks/result looks at a task it waits for (seconds).
RESULT_POLL_SECONDS = 0.25


class TasksExtension(ProtocolExtension):
    """Tasks for both eras (see the module docstring)."""

    identifier = EXTENSION

    def methods(self, ctx: RequestContext) -> Mapping[str, ExtensionHandler]:
        if ctx.is_modern:
            return MODERN_METHODS
        return LEGACY_METHODS if legacy_tasks(ctx) else {}

    def contribute_capabilities(self, capabilities: dict[str, Any], ctx: RequestContext) -> None:
        if ctx.is_modern:
            # Only the extension: never also the 2025-11-25 capability (SEP-2663, "Backward Compatibility").
            capabilities.setdefault("extensions", {})[EXTENSION] = {}
        elif legacy_tasks(ctx):
            capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}

    def name_param(self, method: str) -> str | None:
        return "taskId" if method in ("tasks/get", "tasks/update", "tasks/cancel") else None

    async def listen_filter(self, requested: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """
        ``taskIds`` of a 2026-07-28 ``subscriptions/listen``: the tasks the requester may see, to
        follow with ``notifications/tasks`` (SEP-2663, "Task Status Notifications"); ``-32021``
        without the extension declared.
        """
        ids = requested.get("taskIds")
        if ids is None or not ctx.is_modern:
            return {}
        _require_extension(ctx, "notifications.taskIds")
        if not isinstance(ids, list):
            raise InvalidParams("notifications.taskIds must be a list of task ids")
        owner = owner_of(ctx)
        visible = [task_id for task_id in dict.fromkeys(ids[:MAX_FOLLOWED])
                   if await store.visible_task(task_id, owner) is not None]
        if visible:
            keep_sweeping()  # the listener hears of a lost task without asking (sweeper.py)
        return {"taskIds": visible}

    def listen_groups(self, honoured: dict[str, Any]) -> list[str]:
        return [task_group(task_id) for task_id in honoured.get("taskIds", [])]

    def listen_wants(self, event: dict[str, Any], honoured: dict[str, Any]) -> bool:
        return event.get("kind") == "task" and event.get("taskId") in honoured.get("taskIds", [])


def _task_id(params: dict[str, Any] | None) -> Any:
    task_id = (params or {}).get("taskId")
    if not isinstance(task_id, str):
        raise InvalidParams("taskId must be a string")
    return task_id


async def _find(params: dict[str, Any] | None, ctx: RequestContext) -> McpTask:
    task = await store.visible_task(_task_id(params), owner_of(ctx))
    if task is None:
        raise InvalidParams("Failed to retrieve task: Task not found")
    keep_sweeping()
    return await runner.reap_if_lost(task)


def _require_extension(ctx: RequestContext, what: str = "tasks/*") -> None:
    """A 2026-07-28 request must declare the extension to use its methods (SEP-2663, "Protocol Errors")."""
    extensions = (ctx.client_capabilities or {}).get("extensions")
    if not (isinstance(extensions, dict) and EXTENSION in extensions):
        raise MissingClientCapability({"extensions": {EXTENSION: {}}},
                                      f"{what} needs the {EXTENSION} extension declared in the request")


def call_result(task: McpTask, dispatcher: Any, ctx: RequestContext) -> dict[str, Any] | None:
    """The stored result as ``tools/call`` would have answered this request."""
    if task.result is None:
        return None
    return dispatcher.shape_result("tools/call", dict(task.result), ctx)


# 2026-07-28 ---------------------------------------------------------------------------------


async def modern_get(dispatcher: Any, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    _require_extension(ctx)
    task = await _find(params, ctx)
    return ExtensionResult(detailed_task(task, call_result(task, dispatcher, ctx)))


async def modern_update(dispatcher: Any, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    _require_extension(ctx)
    task = await _find(params, ctx)
    responses = (params or {}).get("inputResponses")
    if not isinstance(responses, dict):
        raise InvalidParams("inputResponses must be an object")
    # Only answers to questions outstanding count; any other key is ignored before anything is
    # checked (SEP-2663, "Task Update Requests").
    outstanding = task.input_requests or {}
    answers = {key: _checked_answer(key, outstanding[key], value) for key, value in responses.items()
               if key in outstanding}
    if answers:
        await store.record_answers(task.id, answers)
    return ExtensionResult({})


async def modern_cancel(dispatcher: Any, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    _require_extension(ctx)
    task = await _find(params, ctx)
    # An ended task is acknowledged too (SEP-2663, "Task Cancellation": cancellation is a request).
    if await store.cancel(task):
        await runner.notify(task.id)
    return ExtensionResult({})


def _checked_answer(key: str, question: dict[str, Any], value: Any) -> Any:
    model = RESULT_MODEL_FOR_METHOD.get(question.get("method", ""))
    if model is None:
        return value
    try:
        return model.model_validate(value).model_dump(by_alias=True, mode="json", exclude_none=True)
    except Exception:
        raise InvalidParams(f"Malformed input response for {key!r}", {"key": key}) from None


MODERN_METHODS: dict[str, ExtensionHandler] = {
    "tasks/get": modern_get, "tasks/update": modern_update, "tasks/cancel": modern_cancel}


# 2025-11-25 ---------------------------------------------------------------------------------


async def legacy_get(dispatcher: Any, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    return ExtensionResult(legacy_task(await _find(params, ctx)))


async def legacy_cancel(dispatcher: Any, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    task = await _find(params, ctx)
    if not await store.cancel(task):
        task = await store.get(task.id) or task
        raise InvalidParams(f"Cannot cancel task: already in terminal status {task.status!r}")
    await runner.notify(task.id)
    return ExtensionResult(legacy_task(await store.get(task.id) or task))


async def legacy_list(dispatcher: Any, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    offset = _offset((params or {}).get("cursor"))
    owner = owner_of(ctx)
    rows = await store.page(owner, offset, PAGE_SIZE + 1)
    visible = rows[:PAGE_SIZE]
    result: dict[str, Any] = {"tasks": [legacy_task(task) for task in visible]}
    if len(rows) > PAGE_SIZE:
        result["nextCursor"] = base64.urlsafe_b64encode(json.dumps(["tasks", offset + PAGE_SIZE]).encode()).decode()
    return ExtensionResult(result)


def _offset(cursor: Any) -> int:
    if cursor is None:
        return 0
    try:
        kind, offset = json.loads(base64.urlsafe_b64decode(str(cursor).encode()))
    except Exception:
        raise InvalidParams("Invalid cursor") from None
    if kind != "tasks" or not isinstance(offset, int) or offset < 0:
        raise InvalidParams("Invalid cursor")
    return offset


async def legacy_result(dispatcher: Any, params: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    """
    Wait until the task ends and answer what its ``tools/call`` would have (MCP spec 2025-11-25,
    basic/utilities/tasks, "Result Retrieval"). While the task waits for input, its questions go
    to the client as requests on this response's stream, tied to the task, and the answers to the
    task (the flow of "Input Required Status").
    """
    task = await _find(params, ctx)
    related = {RELATED_TASK: {"taskId": task.id}}
    relayed: set[str] = set()
    while not task.is_terminal:
        if task.status == McpTask.INPUT_REQUIRED and ctx.send_request is not None:
            fresh = {key: spec for key, spec in task.input_requests.items() if key not in relayed}
            if fresh:
                relayed.update(fresh)
                answers = await _relay(fresh, related, ctx)
                await store.record_answers(task.id, answers)
        await asyncio.sleep(RESULT_POLL_SECONDS)
        fresh = await store.get(task.id)
        if fresh is None:
            raise InvalidParams("Failed to retrieve task: Task has expired")
        task = await runner.reap_if_lost(fresh)
    if task.status == McpTask.FAILED and task.result is None:
        error = task.error or {}
        raise McpError(str(error.get("message") or "The task failed"), error.get("data"),
                       code=int(error.get("code", -32603)))
    if task.status == McpTask.CANCELLED:
        raise InternalError("The task was cancelled")
    result = call_result(task, dispatcher, ctx) or {}
    return ExtensionResult({**result, "_meta": {**(result.get("_meta") or {}), **related}})


async def _relay(questions: dict[str, dict[str, Any]], related: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    send = ctx.send_request
    assert send is not None

    async def ask(spec: dict[str, Any]) -> Any:
        params = {**(spec.get("params") or {})}
        params["_meta"] = {**(params.get("_meta") or {}), **related}
        return await send(spec["method"], params)

    keys = list(questions)
    results = await asyncio.gather(*(ask(questions[key]) for key in keys))
    return {key: _checked_answer(key, questions[key], result) for key, result in zip(keys, results, strict=True)}


LEGACY_METHODS: dict[str, ExtensionHandler] = {
    "tasks/get": legacy_get, "tasks/result": legacy_result, "tasks/list": legacy_list, "tasks/cancel": legacy_cancel}
