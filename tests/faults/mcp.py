"""
Tools that exist only on the fault-injection workers (``tests/faults/settings.py`` installs this
app): ``flood`` streams many large notifications, for the slow-reader faults, and
``inflight_probe`` reports the worker's in-flight bookkeeping for one session, so a test can
check from outside that a fault left nothing behind.
"""

import asyncio

from django_mcp import Context, fanout, tool


@tool()
async def flood(count: int, size: int, ctx: Context, pause: float = 0.0) -> str:
    """Send ``count`` progress notifications whose message is ``size`` bytes, then answer."""
    filler = "x" * size
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, filler)
        # A pause of 0 still yields, so the worker goes on serving its other clients.
        await asyncio.sleep(pause)
    return f"flooded {count}"


@tool(annotations={"readOnlyHint": True})
async def inflight_probe(session_id: str = "") -> dict:
    """
    This worker's bookkeeping: requests in flight and server→client requests awaiting an answer
    (of ``session_id`` when given, else of every session), and the asyncio tasks alive.
    """

    def mine(slots: dict) -> int:
        # Slots are kept by the session's key, the part of a signed id before its first dot.
        return sum(1 for owner, _ in slots if not session_id or owner == session_id.partition(".")[0])

    tasks = asyncio.all_tasks()
    return {"in_flight": mine(fanout.in_flight), "pending_client_requests": mine(fanout.pending_client_requests),
            "tasks": len(tasks), "task_names": sorted(_name(task) for task in tasks)}


def _name(task: asyncio.Task) -> str:
    """What a task runs (its coroutine's qualified name), for a report of what was left behind."""
    coroutine = task.get_coro()
    return getattr(coroutine, "__qualname__", None) or repr(coroutine)
