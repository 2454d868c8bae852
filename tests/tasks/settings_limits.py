"""
Settings of ``test_limits_live.py``'s own server: the suite's settings with at most two working
tasks per user (``DJANGO_MCP["MAX_TASKS_PER_USER"]``), which no per-test override can give a live
server.
"""

from tests.settings import *  # noqa: F403
from tests.settings import DJANGO_MCP


DJANGO_MCP = {**DJANGO_MCP, "MAX_TASKS_PER_USER": 2}
