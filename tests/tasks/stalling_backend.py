"""
A task backend for ``test_sweeper_live.py``: django-tasks-db's database backend, whose
``enqueue`` first waits ``MCP_TEST_STALL_ENQUEUE`` seconds in a process started with that variable
— so a test can kill a web worker after it made a task and before it handed the work over, the
window the sweeper must cover. Without the variable it is the database backend as it ships.
"""

import os
import time
from typing import Any

from django_tasks_db import DatabaseBackend


class StallingDatabaseBackend(DatabaseBackend):
    """The database backend, slow to enqueue where ``MCP_TEST_STALL_ENQUEUE`` says so."""

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        time.sleep(float(os.environ.get("MCP_TEST_STALL_ENQUEUE") or 0))
        return super().enqueue(task, args, kwargs)
