"""
Finding lost tasks without waiting for a reader.

A task whose process died — the ``db_worker`` running it, or the web worker that made it before
handing it over — stops writing its heartbeat. A ``tasks/get`` notices (:func:`runner.reap_if_lost`),
but a client may never ask: a 2026-07-28 client may follow its task only through
``subscriptions/listen`` (SEP-2663, "Task Status Notifications"), a 2025-11-25 client only through
its GET stream (MCP spec 2025-11-25, basic/utilities/tasks, "Task Status Notification"). So every
web worker that has made, served or followed a task sweeps: every ``TASK_SWEEP_SECONDS`` it ends
(or, for an idempotent tool, queues again) each task whose heartbeat is three
``TASK_HEARTBEAT_SECONDS`` overdue and announces it, so its listeners, on any worker, hear
``failed`` within three heartbeats and one sweep of the death. It stops once no task is active
anywhere, and starts again with the next task.

No leader is needed: each change is a conditional update on the heartbeat the sweeper read
(:func:`store.lost_again`), so when several workers find the same task, one of them acts on it.
Each sweep looks at a bounded batch, the longest silent first.
"""

from __future__ import annotations

import asyncio
import logging
import random

from ..conf import mcp_settings
from . import runner, store


logger = logging.getLogger("django_mcp.tasks")

#: Tasks one sweep looks at; a full batch is followed by the next at once.
BATCH = 100

_sweeper: asyncio.Task[None] | None = None


def keep_sweeping() -> None:
    """
    Have this process sweep (see the module docstring) from now on while any task is active;
    a no-op when it does already, when ``TASK_SWEEP_SECONDS`` is None, and in the task
    framework's worker, whose event loops last one task each.
    """
    global _sweeper
    interval = mcp_settings.TASK_SWEEP_SECONDS
    if interval is None or store.worker_thread.get() is not None:
        return
    loop = asyncio.get_running_loop()
    if _sweeper is not None and not _sweeper.done() and _sweeper.get_loop() is loop:
        return
    _sweeper = loop.create_task(_sweep_while_active(float(interval)), name="django_mcp task sweeper")


async def _sweep_while_active(interval: float) -> None:
    while True:
        # Workers started together would otherwise sweep in step.
        await asyncio.sleep(interval * random.uniform(0.9, 1.0))
        try:
            while await sweep() == BATCH:
                pass
            if not await store.any_active():
                return
        except Exception:
            # The database away for a moment: try again next interval.
            logger.warning("Could not look for MCP tasks whose worker stopped", exc_info=True)


async def sweep() -> int:
    """End or requeue one batch of tasks whose heartbeat is overdue; how many were looked at."""
    lost = await store.overdue(limit=BATCH)
    for task in lost:
        await runner.reap_if_lost(task)
    return len(lost)
