"""
The queue's floor for ``benchmarks/tasks.py``'s drain: a Django task that does nothing, so a
``db_worker`` draining a backlog of them measures the task framework's own cost per task (claim,
result, its queries) on the same table, backlog and machine as the MCP tasks it drains.
"""

from django_mcp.tasks import compat

assert compat.task is not None, "the drain's floor needs Django's task framework (django-tasks on Django 5.2)"


@compat.task()
def noop() -> None:
    """Nothing: what remains of a drain is the queue's own work."""
