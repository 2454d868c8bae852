"""
Settings of the sweeper's live tests (``test_sweeper_live.py``): the suite's settings with MCP
tasks on a task backend of their own, ``sweeper_live``, which queues them elsewhere — on the
database backend ``sweeper_queue``, served only by that module's ``db_worker`` processes — and
slowly in a worker started with ``MCP_TEST_STALL_ENQUEUE`` (tests/tasks/stalling_backend.py); a
one-second heartbeat and a one-second sweep, so a lost task is announced within about four seconds.
"""

from tests.settings import *  # noqa: F403
from tests.settings import DJANGO_MCP


TASKS = {**globals().get("TASKS", {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}),
         "sweeper_queue": {"BACKEND": "django_tasks_db.DatabaseBackend"},
         "sweeper_live": {"BACKEND": "tests.tasks.stalling_backend.StallingQueue", "OPTIONS": {"QUEUE": "sweeper_queue"}}}
DJANGO_MCP = {**DJANGO_MCP, "TASK_BACKEND": "sweeper_live", "TASK_HEARTBEAT_SECONDS": 1, "TASK_SWEEP_SECONDS": 1}
