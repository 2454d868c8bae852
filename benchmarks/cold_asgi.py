"""
django_mcp serving what the benchmark's peer serves (``sdk_asgi.py``): one tool, ``echo(text: str)
-> str``, a plain ``def``, on a site of its own. The cold sessions compare like with like: the same
``tools/list`` of one tool, not the 35 tools of the test app (about 8 KiB a listing, against the
peer's 0.4 KiB).

Everything else is the test project's (``tests.settings``): the database the benchmark gives it,
the session store, authentication and the channel layer. ``echo`` runs in a thread as a sync tool,
as the SDK runs its sync tool in a worker thread; with ``BENCH_ASYNC_TOOL=1`` it is an ``async def``
on both sides, so the two can also be compared without that hop.

    uvicorn benchmarks.cold_asgi:application
"""

import os

from django.core.asgi import get_asgi_application


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django_asgi_app = get_asgi_application()

import django_mcp.asgi  # noqa: E402  (needs the app registry)
from django_mcp.sites import McpSite  # noqa: E402


site = McpSite("django-mcp-bench-cold")


if os.environ.get("BENCH_ASYNC_TOOL"):
    # The async twin (cold_run.py's async rows): no thread hop on either side.
    @site.tool()
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text
else:
    @site.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text


application = django_mcp.asgi.application(django_asgi_app, site=site)
