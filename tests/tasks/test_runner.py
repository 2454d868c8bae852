"""
Running a task's work, in process (django_mcp/tasks/runner.py), on a site of this module's own
(sites are found by name, so a task row names it): a cancellation stops the work and is never
overwritten by its end, an ended or cancelled task is not run again, a tool error ends the task per
revision, a question parks the task until answered, and a task whose worker went quiet is failed —
or, for a tool annotated ``idempotentHint``, run again.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from django_mcp import Context, McpSite, ToolError
from django_mcp.tasks import runner, store
from django_mcp.tasks.models import McpTask

pytestmark = pytest.mark.django_db(transaction=True)

SITE = McpSite("tasks-runner-tests")
events: dict[str, list[str]] = {}


@SITE.tool(name="sleeper", task_support="optional")
async def sleeper(mark: str, seconds: float = 30) -> str:
    """Sleeps; records that it started, and whether it was cancelled or finished."""
    events.setdefault(mark, []).append("started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        events[mark].append("cancelled")
        raise
    events[mark].append("finished")
    return "slept"


@SITE.tool(name="again", task_support="optional", annotations={"idempotentHint": True})
async def again(mark: str) -> str:
    """Safe to run twice: counts its runs."""
    events.setdefault(mark, []).append("ran")
    return f"ran {len(events[mark])} time(s)"


@SITE.tool(name="once", task_support="optional")
async def once(mark: str) -> str:
    """Not safe to run twice."""
    events.setdefault(mark, []).append("ran")
    return "ran"


@SITE.tool(name="refuses", task_support="optional")
async def refuses() -> str:
    """A tool error (``isError``)."""
    raise ToolError("no, thank you")


@SITE.tool(name="asks", task_support="optional")
async def asks(ctx: Context) -> str:
    """Asks one question inside its task."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}},
                              key="who")
    return f"hello {(answer.content or {}).get('name')}"


async def make(tool: str, arguments: dict | None = None, **fields) -> McpTask:
    now = timezone.now()
    values = {"id": store.new_task_id(), "site": SITE.name, "tool": tool, "arguments": arguments or {},
              "owner": "anonymous", "protocol_version": "2026-07-28", "created": now, "last_updated": now,
              "client_capabilities": {"elicitation": {}}, **fields}
    return await McpTask.objects.acreate(**values)


async def fresh(task: McpTask) -> McpTask:
    return await McpTask.objects.aget(pk=task.pk)


async def until(predicate, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def status_is(task: McpTask, *statuses: str):
    async def check() -> bool:
        return (await fresh(task)).status in statuses
    return check


async def test_the_work_runs_to_completed():
    task = await make("once", {"mark": "plain"})
    await runner.run(task.id)
    row = await fresh(task)
    assert row.status == McpTask.COMPLETED and row.result["content"][0]["text"] == "ran"
    assert row.attempts == 1 and row.started is not None and row.finished is not None


async def test_a_cancellation_stops_the_work_within_half_a_second():
    mark = "cancel-stops"
    task = await make("sleeper", {"mark": mark})
    await runner.start(task)
    await until(lambda: _async(events.get(mark) == ["started"]))
    assert await store.cancel(task)
    began = time.monotonic()
    await until(lambda: _async("cancelled" in events[mark]), timeout=1.0)
    assert time.monotonic() - began < 0.6  # the work looks for a cancellation every 0.25 s
    await asyncio.sleep(0.1)
    row = await fresh(task)
    assert row.status == McpTask.CANCELLED and row.result is None and row.error is None
    assert events[mark] == ["started", "cancelled"]


async def test_finish_never_overwrites_a_cancellation():
    task = await make("once", {"mark": "x"}, status=McpTask.WORKING)
    assert await store.cancel(task)
    await runner.finish(task, McpTask.COMPLETED, result={"content": [{"type": "text", "text": "late"}]})
    await runner.finish(task, McpTask.FAILED, error={"code": -32603, "message": "late"})
    row = await fresh(task)
    assert row.status == McpTask.CANCELLED and row.result is None and row.error is None
    assert row.status_message == "Cancelled by the client"


async def test_a_cancelled_or_ended_task_is_not_run():
    mark = "never"
    cancelled = await make("once", {"mark": mark})
    await store.cancel(cancelled)
    ended = await make("once", {"mark": mark}, status=McpTask.COMPLETED)
    for task in (cancelled, ended):
        await runner.run(task.id)
        assert (await fresh(task)).attempts == 0
    assert mark not in events


@pytest.mark.parametrize(("revision", "status"), [("2026-07-28", McpTask.COMPLETED), ("2025-11-25", McpTask.FAILED)])
async def test_a_tool_error_ends_the_task_per_revision(revision, status):
    task = await make("refuses", protocol_version=revision)
    await runner.run(task.id)
    row = await fresh(task)
    assert row.status == status
    assert row.result["isError"] is True and row.result["content"][0]["text"] == "no, thank you"
    assert row.error is None


async def test_an_unknown_site_fails_the_task():
    task = await make("once", {"mark": "x"}, site="no-such-site")
    await runner.run(task.id)
    row = await fresh(task)
    assert row.status == McpTask.FAILED and row.error["code"] == -32603


async def test_a_question_parks_the_task_until_answered():
    task = await make("asks")
    await runner.start(task)
    await until(await status_is(task, McpTask.INPUT_REQUIRED))
    row = await fresh(task)
    assert list(row.input_requests) == ["who"] and row.asked_keys == ["who"]
    assert row.input_requests["who"]["method"] == "elicitation/create"
    await store.record_answers(task.id, {"who": {"action": "accept", "content": {"name": "Ada"}}})
    await until(await status_is(task, McpTask.COMPLETED, McpTask.FAILED))
    row = await fresh(task)
    assert row.status == McpTask.COMPLETED and row.result["content"][0]["text"] == "hello Ada"
    assert row.input_requests == {}


def _async(value):
    async def constant():
        return value
    return constant()


def stale(**fields) -> dict:
    """Fields of a task whose work started long ago and has been silent for a minute (three beats are 30 s)."""
    now = timezone.now()
    return {"started": now - timedelta(seconds=90), "heartbeat": now - timedelta(seconds=60), "attempts": 1,
            **fields}


async def test_reap_if_lost_fails_a_task_whose_worker_went_quiet():
    task = await make("once", {"mark": "lost"}, **stale())
    reaped = await runner.reap_if_lost(task)
    assert reaped.status == McpTask.FAILED
    assert reaped.error["code"] == -32603 and "stopped" in reaped.error["message"]
    assert (await fresh(task)).status == McpTask.FAILED
    assert "lost" not in events  # not run again


async def test_reap_if_lost_runs_an_idempotent_tools_task_again():
    mark = "rerun"
    task = await make("again", {"mark": mark}, **stale())
    await runner.reap_if_lost(task)
    await until(await status_is(task, McpTask.COMPLETED, McpTask.FAILED))
    row = await fresh(task)
    assert row.status == McpTask.COMPLETED and row.attempts == 2
    assert row.result["content"][0]["text"] == "ran 1 time(s)"
    assert events[mark] == ["ran"]


async def test_reap_if_lost_gives_up_on_an_idempotent_tool_after_max_attempts():
    task = await make("again", {"mark": "worn-out"}, **stale(attempts=runner.MAX_ATTEMPTS))
    assert (await runner.reap_if_lost(task)).status == McpTask.FAILED
    assert "worn-out" not in events


async def test_reap_if_lost_leaves_a_task_with_a_fresh_heartbeat_alone():
    now = timezone.now()
    task = await make("once", {"mark": "alive"}, started=now - timedelta(seconds=90), heartbeat=now)
    assert (await runner.reap_if_lost(task)).status == McpTask.WORKING
    assert (await fresh(task)).status == McpTask.WORKING


async def test_reap_lost_looks_at_every_overdue_task():
    lost = [await make("once", {"mark": "bulk"}, **stale()) for _ in range(2)]
    alive = await make("once", {"mark": "bulk"}, started=timezone.now(), heartbeat=timezone.now())
    assert await runner.reap_lost() == 2
    assert [(await fresh(task)).status for task in lost] == [McpTask.FAILED] * 2
    assert (await fresh(alive)).status == McpTask.WORKING


async def test_reap_if_lost_fails_a_task_its_maker_never_handed_over():
    # Made by a web worker that stopped before queuing or starting it: held (a heartbeat), never started.
    task = await make("once", {"mark": "orphan"}, heartbeat=timezone.now() - timedelta(minutes=5))
    reaped = await runner.reap_if_lost(task)
    assert reaped.status == McpTask.FAILED
    assert "before its work started" in reaped.error["message"]
    assert "orphan" not in events
