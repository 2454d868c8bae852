"""
DNS-rebinding protection and content negotiation for the HTTP transports (MCP spec 2025-11-25, basic/transports#streamable-http; MCP security best practices).

Hosts are checked against Django's ``ALLOWED_HOSTS`` (as Django itself does, including its
localhost allowance under ``DEBUG``). An ``Origin`` header, when present, must name an allowed host
too, or be listed in ``DJANGO_MCP["ALLOWED_ORIGINS"]``; browsers cannot forge it, so a page on a
rebinding domain is refused even when it reaches 127.0.0.1.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from ..conf import mcp_settings


def allowed_hosts() -> list[str]:
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def host_is_allowed(host: str | None) -> bool:
    """Whether the ``Host`` header names this server."""
    if not host:
        return False
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, allowed_hosts())


def origin_is_allowed(origin: str | None) -> bool:
    """Whether a request's ``Origin`` may talk to us; no Origin (non-browser clients) is fine."""
    if origin is None:
        return True
    if origin in mcp_settings.ALLOWED_ORIGINS:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return validate_host(host, allowed_hosts())


def media_types(header: str | None) -> list[str]:
    """The media types of an ``Accept`` or ``Content-Type`` header, parameters dropped, lower-cased."""
    if not header:
        return []
    return [part.split(";", 1)[0].strip().lower() for part in header.split(",") if part.strip()]


def accepts(header: str | None, media_type: str) -> bool:
    """Whether an ``Accept`` header allows ``media_type`` (wildcards included)."""
    kind = media_type.split("/", 1)[0]
    return any(t in (media_type, f"{kind}/*", "*/*") for t in media_types(header))
