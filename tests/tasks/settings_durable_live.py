"""
Settings of the durable-task live tests (``test_durable_live.py``): the suite's settings with
MCP tasks on a task backend of their own, ``durable_live`` (django-tasks-db's database backend,
served only by that module's ``db_worker`` processes), a one-second task heartbeat, so a task
whose ``db_worker`` was killed is noticed within seconds, and each process's PostgreSQL
connections named after it (``MCP_TEST_PG_APPLICATION``), so a test can count them.
"""

import os

from tests.settings import *  # noqa: F403
from tests.settings import DATABASES, DJANGO_MCP


TASKS = {**globals().get("TASKS", {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}),
         "durable_live": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
DJANGO_MCP = {**DJANGO_MCP, "TASK_BACKEND": "durable_live", "TASK_HEARTBEAT_SECONDS": 1}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES = {**DATABASES, "default": {**DATABASES["default"], "OPTIONS": {
        **DATABASES["default"].get("OPTIONS", {}),
        "application_name": os.environ.get("MCP_TEST_PG_APPLICATION", "durable_live")}}}
