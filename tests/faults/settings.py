"""
Settings of the fault-injection workers: ``tests.settings`` plus three things the faults need.

- ``MCP_FAULTS_PG_PORT`` / ``MCP_FAULTS_REDIS_PORT``: connect to PostgreSQL and Redis through
  these ports on 127.0.0.1 (the relays of ``tests/faults/proxy.py``) instead of 5432 and 6379.
  ``tests/settings.py`` hard-codes the services' addresses, so this module overrides them here;
  with neither variable set it changes nothing about where the services are.
- ``tests.faults`` is installed, so its ``mcp`` module adds the tools the faults drive (a flood of
  notifications, and a probe of the worker's in-flight bookkeeping).
- ``STREAM_LIVENESS_SECONDS`` is short (``MCP_FAULTS_LIVENESS``, default 3 s), so a resumer of a
  stream whose worker died learns it quickly enough for a test to wait for.
"""

import os

from tests.settings import *  # noqa: F401,F403
from tests.settings import CHANNEL_LAYERS, DATABASES, DJANGO_MCP, INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.faults"]

_pg_port = os.environ.get("MCP_FAULTS_PG_PORT")
if _pg_port and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A refused connection fails at once; a stalled one gives up after connect_timeout.
    DATABASES = {"default": {**DATABASES["default"], "PORT": _pg_port, "OPTIONS": {"connect_timeout": 3}}}

_redis_port = os.environ.get("MCP_FAULTS_REDIS_PORT")
if _redis_port and CHANNEL_LAYERS["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer":
    CHANNEL_LAYERS = {"default": {**CHANNEL_LAYERS["default"], "CONFIG": {
        **CHANNEL_LAYERS["default"]["CONFIG"], "hosts": [("127.0.0.1", int(_redis_port))]}}}

DJANGO_MCP = {**DJANGO_MCP, "STREAM_LIVENESS_SECONDS": float(os.environ.get("MCP_FAULTS_LIVENESS", "3"))}
