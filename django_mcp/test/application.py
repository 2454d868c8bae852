"""The ASGI application the test clients talk to (the project's own, as served), and its deferred writes."""

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


_by_site: dict[int, tuple[Any, Any]] = {}


def site_application(site: Any) -> Any:
    """
    Django's ASGI application with ``site`` (an :class:`~django_mcp.sites.McpSite`, or its import
    path) served at the MCP endpoint, as ``django_mcp.asgi.application(..., site=site)`` mounts it;
    made once per site.
    """
    if isinstance(site, str):
        from django.utils.module_loading import import_string

        site = import_string(site)
    made = _by_site.get(id(site))
    if made is None or made[0] is not site:
        from django.core.asgi import get_asgi_application

        from ..asgi import application

        made = _by_site[id(site)] = (site, application(get_asgi_application(), site=site))
    return made[1]


async def flush_deferred() -> None:
    """Write now what the server put off (new session rows, the call log), so the test sees it."""
    from ..signals import flush_requested
    from ..stores.sessions import get_session_store

    await get_session_store().flush()
    if flush_requested.receivers:
        await flush_requested.asend(sender=None)
