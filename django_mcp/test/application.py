"""The ASGI application the test client talks to: the project's own, as its server would serve it."""

from __future__ import annotations

from typing import Any

_cache: dict[str, Any] = {}


def project_application() -> Any:
    """
    The application named by ``settings.ASGI_APPLICATION`` (as daphne and Channels' ``runserver``
    serve it), imported once; a project without the setting gets Django's ASGI application with
    the MCP endpoint mounted by :func:`django_mcp.asgi.application`.
    """
    from django.conf import settings

    name = getattr(settings, "ASGI_APPLICATION", None) or ""
    if name not in _cache:
        _cache[name] = _load(name)
    return _cache[name]


def _load(name: str) -> Any:
    if name:
        from django.utils.module_loading import import_string

        return import_string(name)
    from django.core.asgi import get_asgi_application

    from ..asgi import application

    return application(get_asgi_application())
