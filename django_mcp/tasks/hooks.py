"""
Which ``tools/call`` becomes a task, through the core's hook around listing and calling.

A tool opts in with ``task_support``: ``"optional"`` or ``"required"`` (``"forbidden"``, the
default, leaves it alone). Then:

- 2025-11-25 (MCP spec 2025-11-25, basic/utilities/tasks, "Tool-Level Negotiation"): the client
  asks for a task with the call's ``task`` param; the listing says ``execution.taskSupport``. A
  ``required`` tool called without ``task``, and a ``task`` for a tool without support, are
  ``-32601``.
- 2026-07-28 (SEP-2663, "Capability Negotiation"): the server decides. A call whose request
  declares the extension gets a task for any supporting tool; one that does not runs a
  ``optional`` tool as usual and is refused ``-32021`` by a ``required`` one. The ``task`` param
  of the earlier revision means nothing here.

A tool may ask the client for what it needs before its task exists (``ask_before_task``: input
requests, or a function of the arguments returning them): asked in the call itself — for
2026-07-28 as a multi-round-trip ``InputRequiredResult`` (SEP-2663, "Task Creation": input is
resolved before the task is made), for 2025-11-25 as requests on the call's stream — and handed to
the task, where ``ctx.request_input()`` with the same keys finds them answered.
"""

from __future__ import annotations

import asyncio
from typing import Any

from django.utils import timezone

from ..conf import mcp_settings
from ..hooks import CallNext, Hook, ToolCall, defer
from ..protocol.errors import InvalidParams, MethodNotFound, MissingClientCapability
from ..protocol.extensions import ExtensionResult
from ..protocol.input import request_input
from ..protocol.versions import at_least
from ..stores.sessions import user_key
from . import runner, store
from .models import McpTask
from .sweeper import keep_sweeping
from .wire import EXTENSION, legacy_task, modern_task


FORBIDDEN, OPTIONAL, REQUIRED = "forbidden", "optional", "required"
SUPPORT_VALUES = (FORBIDDEN, OPTIONAL, REQUIRED)


def task_support(tool: Any) -> str:
    """The tool's ``task_support`` option (``"forbidden"`` unless it says otherwise)."""
    return getattr(tool, "task_support", None) or FORBIDDEN


def legacy_tasks(request: Any) -> bool:
    """Whether a legacy request's revision has tasks (2025-11-25 and later)."""
    return not request.is_modern and at_least(request.protocol_version, "2025-11-25")


def owner_of(request: Any) -> store.Owner:
    """Who a task made by this request belongs to."""
    auth = request.auth
    application = getattr(auth, "application", None)
    client = str(getattr(application, "client_id", "") or getattr(auth, "client", "") or "")[:200]
    session = request.session.id if request.session is not None else ""
    return store.Owner(user_key(request.user), client, session)


class TaskHook(Hook):
    """Turns a ``tools/call`` into a task where the tool and the request call for one."""

    kinds = {"tool"}

    async def definition(self, site: Any, primitive: Any, definition: dict[str, Any], ctx: Any) -> dict[str, Any]:
        support = task_support(primitive)
        if support == FORBIDDEN or not legacy_tasks(ctx.request):
            return definition  # 2026-07-28 tools carry no execution field (SEP-2663)
        return {**definition, "execution": {**(definition.get("execution") or {}), "taskSupport": support}}

    async def call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        request = call.request
        if runner.running_task.get() is not None:
            return await call_next(call)  # the task's own work
        support = task_support(call.tool)
        if request.is_modern:
            if support == FORBIDDEN:
                return await call_next(call)
            if not _declares_extension(request):
                if support == REQUIRED:
                    raise MissingClientCapability({"extensions": {EXTENSION: {}}},
                                                  f"The tool {call.tool.name!r} runs only as a task: declare the "
                                                  f"{EXTENSION} extension")
                return await call_next(call)
            return await self.create(call, ttl_ms=None)
        params = request.params if isinstance(request.params, dict) else {}
        wanted = params.get("task") if legacy_tasks(request) else None
        if not isinstance(wanted, dict):  # absent (the revision's schema has checked its shape)
            if support == REQUIRED:
                raise MethodNotFound("Task augmentation required for tools/call requests")
            return await call_next(call)
        if support == FORBIDDEN:
            raise MethodNotFound(f"The tool {call.tool.name!r} does not support task augmentation")
        return await self.create(call, ttl_ms=wanted.get("ttl"))

    async def create(self, call: ToolCall, *, ttl_ms: int | None) -> dict[str, Any]:
        """Make the task durably, start its work, and answer with its handle (``CreateTaskResult``)."""
        request = call.request
        owner = owner_of(request)
        limit = mcp_settings.MAX_TASKS_PER_USER
        if limit is not None and await store.active_count(owner) >= limit:
            raise InvalidParams(f"Too many tasks: at most {limit} may be working at once; wait for one to finish")
        answers = await _ask_before_task(call)
        ttl = _ttl(ttl_ms)
        now = timezone.now()
        auth = request.auth
        scopes = getattr(auth, "scopes", None) if auth is not None else None
        if isinstance(scopes, str):
            scopes = scopes.split()
        elif scopes is None and auth is not None and isinstance(getattr(auth, "scope", None), str):
            scopes = auth.scope.split()
        user = request.user
        # Made and started together even if the client goes away meanwhile (its request is then
        # cancelled): a row made but never started would answer "working" until its TTL.
        return await asyncio.shield(self._create_and_start(call, owner, answers, ttl, now, scopes, user))

    async def _create_and_start(self, call: ToolCall, owner: store.Owner, answers: dict[str, Any], ttl: int | None,
                                now: Any, scopes: Any, user: Any) -> dict[str, Any]:
        request = call.request
        task_id = store.new_task_id()
        # What the hooks want to travel with the work (a trace context: its run links back to this call).
        carried = await defer(call.site, request, "tools/call", call.tool.name, task_id)
        task = await runner.create_and_start(
            id=task_id, carried=carried, site=getattr(call.site, "name", "default"), tool=call.tool.name,
            arguments=call.arguments, owner=owner.key, client=owner.client, session=owner.session,
            username=str(getattr(user, "get_username", lambda: "")() or "")[:150] if user is not None else "",
            scopes=sorted(scopes) if scopes is not None else None, protocol_version=request.protocol_version,
            client_capabilities=request.client_capabilities or {}, transport=request.transport,
            status=McpTask.WORKING, input_answers=answers, asked_keys=sorted(answers), created=now,
            last_updated=now, ttl_ms=ttl, expires=store.expiry_for(ttl))
        # Durable before the answer: a tasks/get right after it, on any worker, finds the task
        # (SEP-2663, "Task Creation").
        keep_sweeping()
        if request.is_modern:
            return ExtensionResult({"resultType": "task", **modern_task(task)})
        return ExtensionResult({"task": legacy_task(task)})


def _declares_extension(request: Any) -> bool:
    extensions = (request.client_capabilities or {}).get("extensions")
    return isinstance(extensions, dict) and EXTENSION in extensions


def _ttl(requested: int | None) -> int | None:
    """The TTL a task gets: the client's (2025-11-25 ``task.ttl``) when shorter than the server's."""
    limit = mcp_settings.TASK_TTL_MS
    if isinstance(requested, int) and requested > 0:
        return requested if limit is None else min(requested, limit)
    return limit


async def _ask_before_task(call: ToolCall) -> dict[str, Any]:
    questions = getattr(call.tool, "ask_before_task", None)
    if callable(questions):
        questions = questions(call.arguments)
    if not questions:
        return {}
    answers = await request_input(call.request, questions)
    return {key: answer.model_dump(by_alias=True, mode="json", exclude_none=True) for key, answer in answers.items()}
