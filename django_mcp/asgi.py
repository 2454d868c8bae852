"""
Mounting the MCP endpoint inside a project's ASGI application::

    # asgi.py
    from django.core.asgi import get_asgi_application
    django_asgi_app = get_asgi_application()

    import django_mcp.asgi
    application = django_mcp.asgi.application(django_asgi_app)

Requests to ``/mcp`` (the ``MCP_PATH`` setting) go to :class:`McpHttpConsumer`, and the
2024-11-05 HTTP+SSE pair ``/sse`` + ``/messages/`` (``SSE_PATH``, ``SSE_MESSAGES_PATH``) to its two
consumers, ``/healthz`` and ``/readyz`` (``HEALTH_PATH``, ``READINESS_PATH``) to the liveness and
readiness checks (:mod:`django_mcp.transports.health`), paths feature apps add
(:mod:`django_mcp.endpoints`, e.g. ``/metrics``) to theirs; everything else goes to Django.
Projects with their own router can route the consumers themselves: ``McpHttpConsumer.as_asgi()``,
``LegacySseStreamConsumer.as_asgi(messages_path=...)`` and ``LegacySseMessagesConsumer.as_asgi()``.

Static files: daphne and uvicorn serve none by themselves, so ``application()`` serves them the way
``manage.py runserver`` does. With ``DEBUG`` on, ``django.contrib.staticfiles`` installed and a local
``STATIC_URL`` (a path such as ``"static/"``, not an ``https://`` address), requests under
``STATIC_URL`` that are not MCP's are answered from the staticfiles finders by Django's own
``ASGIStaticFilesHandler``; a missing file is Django's 404. ``serve_static=True`` serves them
whatever ``DEBUG`` says (runserver's ``--insecure``), ``serve_static=False`` never (``--nostatic``).
This is for development: in production run ``collectstatic`` and let the web server, a CDN or a
static files library serve ``STATIC_ROOT`` (README, "Static files").
"""

import gc
from typing import Any
from urllib.parse import urlsplit

from .conf import mcp_settings
from .endpoints import added_endpoints
from .transports.health import health_app
from .transports.http import McpHttpConsumer
from .transports.http_sse import LegacySseMessagesConsumer, LegacySseStreamConsumer


def _normalized(path: str | None) -> str | None:
    return None if path is None else "/" + path.strip("/")


def application(django_asgi_app: Any, *, site: Any = None, path: str | None = None,
                authentication_classes: Any = None, serve_static: bool | None = None) -> Any:
    """
    An ASGI app that serves MCP at ``path`` and hands every other request to ``django_asgi_app``.
    ``site`` and ``authentication_classes`` default to ``DJANGO_MCP["SITE"]`` and
    ``DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]``.

    ``serve_static`` mirrors ``runserver``: None (the default) serves static files under
    ``STATIC_URL`` from the staticfiles finders when ``settings.DEBUG`` is on,
    ``django.contrib.staticfiles`` is installed and ``STATIC_URL`` is a local path; True serves them
    even without ``DEBUG`` (``runserver --insecure``), and raises ``ImproperlyConfigured`` when the
    app is not installed or ``STATIC_URL`` is not a local path; False never serves them. It is
    decided once, here: MCP requests are routed first and pay nothing for it.
    """
    if static_files_served(serve_static):
        django_asgi_app = _static_files_handler(django_asgi_app)
    options = {"site": site, "authentication_classes": authentication_classes}
    consumers = {
        "mcp": McpHttpConsumer.as_asgi(**options),
        "sse": LegacySseStreamConsumer.as_asgi(**options),
        "messages": LegacySseMessagesConsumer.as_asgi(**options),
        "health": health_app("liveness"),
        "ready": health_app("readiness"),
    }

    def route(request_path: str) -> Any:
        # Settings are read per request, so tests and projects may change them at run time.
        wanted = request_path.rstrip("/") or "/"
        for name, configured in (("mcp", path if path is not None else mcp_settings.MCP_PATH),
                                 ("sse", mcp_settings.SSE_PATH), ("messages", mcp_settings.SSE_MESSAGES_PATH),
                                 ("health", mcp_settings.HEALTH_PATH), ("ready", mcp_settings.READINESS_PATH)):
            if _normalized(configured) == wanted:
                return consumers[name]
        for endpoint in added_endpoints():  # the feature apps' (metrics)
            if _normalized(endpoint.path()) == wanted:
                return endpoint.app
        return None

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        consumer = route(scope["path"]) if scope["type"] == "http" else None
        if consumer is not None:
            return await consumer(scope, receive, send)
        return await django_asgi_app(scope, receive, send)

    if mcp_settings.FREEZE_STARTUP_OBJECTS:
        freeze_startup_objects()
    if mcp_settings.GC_THRESHOLD:
        raise_gc_threshold(mcp_settings.GC_THRESHOLD)
    return app


def static_files_served(serve_static: bool | None = None) -> bool:
    """
    Whether ``application(..., serve_static=serve_static)`` serves static files (module docstring),
    from the settings as they are now.
    """
    if serve_static is False:
        return False
    from django.apps import apps
    from django.conf import settings

    installed = apps.is_installed("django.contrib.staticfiles")
    static_url = settings.STATIC_URL  # with the script prefix, as the {% static %} tag writes it
    parts = urlsplit(static_url) if static_url else None
    local = parts is not None and not parts.scheme and not parts.netloc and parts.path.startswith("/")
    if serve_static is None:
        return bool(settings.DEBUG) and installed and local
    from django.core.exceptions import ImproperlyConfigured

    if not installed:
        raise ImproperlyConfigured("serve_static=True needs 'django.contrib.staticfiles' in INSTALLED_APPS.")
    if not local:
        raise ImproperlyConfigured(f"serve_static=True needs STATIC_URL to be a local path such as 'static/', "
                                   f"not {static_url!r}: files at another address are served from there.")
    return True


def _static_files_handler(django_asgi_app: Any) -> Any:
    """
    Django's ``ASGIStaticFilesHandler`` around ``django_asgi_app``, answering a path that leaves the
    static folders (``/static/%2e%2e/settings.py``: ``SuspiciousFileOperation``) with Django's 400
    rather than an exception out of the application (a 500 and a traceback in the server's log).
    """
    from asgiref.sync import sync_to_async
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from django.core.exceptions import SuspiciousOperation
    from django.core.handlers.exception import response_for_exception

    class StaticFilesHandler(ASGIStaticFilesHandler):
        async def get_response_async(self, request: Any) -> Any:
            try:
                return await super().get_response_async(request)
            except SuspiciousOperation as exc:
                return await sync_to_async(response_for_exception, thread_sensitive=False)(request, exc)

    return StaticFilesHandler(django_asgi_app)


def freeze_startup_objects() -> None:
    """
    Move everything that exists now — modules, settings, the site, the ASGI app — out of the
    cyclic collector's reach (``gc.freeze()``), after collecting the start-up garbage. A full
    collection otherwise walks all of it again and again, pausing every stream of the worker
    (docs/architecture.md, "Performance"). ``application()`` calls this unless
    ``DJANGO_MCP["FREEZE_STARTUP_OBJECTS"]`` is False; a project with its own router may call it
    once it has built its application.
    """
    gc.collect()
    gc.freeze()


def raise_gc_threshold(threshold: int) -> None:
    """
    Let the cyclic collector's youngest generation grow to ``threshold`` container objects
    (``gc.set_threshold``; the older generations keep theirs), unless it is set higher already.
    ``application()`` calls this with ``DJANGO_MCP["GC_THRESHOLD"]``.

    Under load the default of 700 starts a young collection every few requests, and each walks
    every object of the requests in flight (32 connections: a few thousand) to free nothing,
    since an answered request leaves no cycle (docs/architecture.md, "Performance"): about 5% of
    a small call's CPU on uvicorn (benchmarks/README.md). Cyclic garbage a project makes waits
    for a larger allocation count before it is collected; Python 3.13 itself raised the default
    to 2,000.
    """
    current = gc.get_threshold()
    if current[0] < threshold:
        gc.set_threshold(threshold, *current[1:])


__all__ = ["LegacySseMessagesConsumer", "LegacySseStreamConsumer", "McpHttpConsumer", "application",
           "freeze_startup_objects", "raise_gc_threshold", "static_files_served"]
