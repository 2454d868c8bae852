"""
Mounting the MCP endpoint inside a project's ASGI application::

    # asgi.py
    from django.core.asgi import get_asgi_application
    django_asgi_app = get_asgi_application()

    import django_mcp.asgi
    application = django_mcp.asgi.application(django_asgi_app)

Requests to ``/mcp`` (the ``MCP_PATH`` setting) go to :class:`McpHttpConsumer`; everything else
goes to Django. Projects with their own ``ProtocolTypeRouter`` can route
``path("mcp", McpHttpConsumer.as_asgi())`` themselves instead.
"""

from typing import Any

from .conf import mcp_settings
from .transports.http import McpHttpConsumer


def application(django_asgi_app: Any, *, site: Any = None, path: str | None = None) -> Any:
    """An ASGI app that serves MCP at ``path`` and hands every other request to ``django_asgi_app``."""
    consumer = McpHttpConsumer.as_asgi(site=site)

    def mcp_path() -> str:
        return "/" + (path if path is not None else mcp_settings.MCP_PATH).strip("/")

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "http" and scope["path"].rstrip("/") == mcp_path():
            return await consumer(scope, receive, send)
        return await django_asgi_app(scope, receive, send)

    return app


__all__ = ["McpHttpConsumer", "application"]
