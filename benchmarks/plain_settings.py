"""
Settings of ``plain_view.py``'s plain-view servers: ``tests.settings`` (the settings of run.py's
django_mcp servers, and of the Channels endpoint beside them), with ``benchmarks.plain_urls`` as
the URLconf: ``tests.urls`` (``McpView`` at ``/mcp``) and the floor views after it.

``BENCH_PLAIN_MIDDLEWARE=none`` (``plain_view.py --no-middleware``) leaves out the project's
middleware (sessions, common, CSRF, authentication, messages): Django's handler alone.
"""

import os

from tests.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.plain_urls"

if os.environ.get("BENCH_PLAIN_MIDDLEWARE") == "none":
    MIDDLEWARE = []
