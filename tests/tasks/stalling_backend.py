"""
A task backend for ``test_sweeper_live.py`` that keeps its queue elsewhere, as RQ or Celery do: it
hands each task to another backend (``OPTIONS["QUEUE"]``, django-tasks-db's database backend,
served by that module's ``db_worker``) outside any transaction of django_mcp's, after waiting
``MCP_TEST_STALL_ENQUEUE`` seconds in a process started with that variable — so a test can kill a
web worker after it made a task and before it queued the work, the window the sweeper must cover.
"""

import os
import time
from typing import Any

from django_mcp.tasks import compat

try:  # Django >= 6.0
    from django.tasks.backends.base import BaseTaskBackend  # type: ignore[import-not-found]
except ImportError:  # Django 5.2 with the django-tasks backport
    from django_tasks.backends.base import BaseTaskBackend  # type: ignore[import-not-found,no-redef]


class StallingQueue(BaseTaskBackend):
    """Enqueues on the backend ``OPTIONS["QUEUE"]``, slowly where ``MCP_TEST_STALL_ENQUEUE`` says so."""

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        self.queue = params["OPTIONS"]["QUEUE"]

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        time.sleep(float(os.environ.get("MCP_TEST_STALL_ENQUEUE") or 0))
        return compat.backend(self.queue).enqueue(task.using(backend=self.queue), args, kwargs)
