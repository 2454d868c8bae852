"""
The sweeper, in process (django_mcp/tasks/sweeper.py): a lost task is ended and announced with no
reader, an idempotent one is queued again by one of two sweepers only, and the sweeper stops once
no task is active. The same with real processes killed: ``test_sweeper_live.py``.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from channels.layers import get_channel_layer
from django.utils import timezone

from django_mcp.tasks import sweeper
from django_mcp.tasks.models import McpTask
from django_mcp.tasks.wire import task_group

from .test_runner import events, fresh, make, stale

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def quick_sweeps(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "TASK_SWEEP_SECONDS": 0.05, "TASK_HEARTBEAT_SECONDS": 1}
    yield
    if sweeper._sweeper is not None:
        sweeper._sweeper.cancel()


async def until_status(task: McpTask, *statuses: str, timeout: float = 5.0) -> McpTask:
    deadline = time.monotonic() + timeout
    while (row := await fresh(task)).status not in statuses:
        assert time.monotonic() < deadline, f"still {row.status}"
        await asyncio.sleep(0.02)
    return row


async def test_a_lost_task_is_ended_and_announced_with_nobody_reading_it(quick_sweeps):
    layer = get_channel_layer()
    listener = await layer.new_channel()
    task = await make("once", {"mark": "swept"}, **stale())
    await layer.group_add(task_group(task.id), listener)
    sweeper.keep_sweeping()
    row = await until_status(task, McpTask.FAILED)
    assert "stopped" in row.error["message"]
    heard = await asyncio.wait_for(layer.receive(listener), 5)
    assert heard["taskId"] == task.id and heard["message"]["params"]["status"] == "failed", heard
    assert "swept" not in events


async def test_two_sweepers_queue_an_idempotent_task_again_once():
    task = await make("again", {"mark": "contested"}, **stale())
    looked = await asyncio.gather(sweeper.sweep(), sweeper.sweep())
    assert sum(looked) >= 1
    row = await until_status(task, McpTask.COMPLETED)
    assert row.attempts == 2
    assert events["contested"] == ["ran"]


async def test_the_sweeper_stops_once_no_task_is_active_and_starts_again_with_the_next(quick_sweeps):
    task = await make("once", {"mark": "quiet"}, started=timezone.now(), heartbeat=timezone.now())
    sweeper.keep_sweeping()
    first = sweeper._sweeper
    assert first is not None
    sweeper.keep_sweeping()
    assert sweeper._sweeper is first  # one per process
    await asyncio.sleep(0.2)
    assert not first.done()  # a task is active
    await McpTask.objects.filter(pk=task.pk).aupdate(status=McpTask.COMPLETED)
    await asyncio.wait_for(first, 2)
    sweeper.keep_sweeping()
    assert sweeper._sweeper is not first and not sweeper._sweeper.done()


async def test_no_sweeper_when_switched_off(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "TASK_SWEEP_SECONDS": None}
    before = sweeper._sweeper
    sweeper.keep_sweeping()
    assert sweeper._sweeper is before

