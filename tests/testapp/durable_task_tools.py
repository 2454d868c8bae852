"""
Fixtures of the durable-task live tests (``tests/tasks/test_durable_live.py``): tools that run as
MCP tasks and say which process ran them, so a test can tell the task framework's ``db_worker``
from the daphne workers that made the task.
"""

import asyncio
import os

from django_mcp import tool


@tool(name="durable_pid", task_support="optional",
      description="Waits the given number of seconds, then reports the id of the process that ran it.")
async def durable_pid(seconds: float = 0.0) -> str:
    await asyncio.sleep(seconds)
    return f"ran in pid {os.getpid()}"


@tool(name="durable_idempotent_pid", task_support="optional", annotations={"idempotentHint": True},
      description="Like durable_pid, but safe to run again: a task whose worker was lost is re-run.")
async def durable_idempotent_pid(seconds: float = 0.0) -> str:
    await asyncio.sleep(seconds)
    return f"ran in pid {os.getpid()}"
