"""
ASGI endpoints that feature apps add beside MCP's own in :func:`django_mcp.asgi.application`,
the way the core serves ``/healthz`` and ``/readyz``: answered before Django's URL routing, whatever
the Host (a scraper or a probe addresses one worker by its IP). The metrics app adds ``/metrics``::

    # myapp/apps.py, in AppConfig.ready()
    from django_mcp.endpoints import add_endpoint
    add_endpoint("metrics", metrics_app, path=lambda: mcp_settings.METRICS_PATH)

``path`` is asked on every request that no MCP endpoint took, so a setting changed at run time (or
in a test) moves the endpoint; None leaves it out.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An ASGI app served at the path ``path()`` gives (None: not served)."""

    name: str
    app: Any
    path: Callable[[], str | None]


_endpoints: dict[str, Endpoint] = {}


def add_endpoint(name: str, app: Any, *, path: Callable[[], str | None]) -> None:
    """Serve ``app`` at ``path()``; adding a name again replaces the earlier endpoint."""
    _endpoints[name] = Endpoint(name, app, path)


def added_endpoints() -> tuple[Endpoint, ...]:
    """The endpoints feature apps added, in the order they were added."""
    return tuple(_endpoints.values())
