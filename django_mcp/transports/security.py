"""
DNS-rebinding protection and content negotiation for the HTTP transports (MCP spec 2025-11-25,
basic/transports#security-warning: servers MUST validate the ``Origin`` header; MCP security best
practices, "DNS rebinding").

Hosts are checked against Django's ``ALLOWED_HOSTS`` (as Django itself does, including its
localhost allowance under ``DEBUG``). An ``Origin`` header, when present, is compared *exactly*
(scheme, host and port; RFC 6454 section 5) with the origins this server trusts:

- its own: ``http``/``https`` on the default port of each exact ``ALLOWED_HOSTS`` entry, and the
  origin of ``DJANGO_MCP["PUBLIC_BASE_URL"]``;
- ``DJANGO_MCP["ALLOWED_ORIGINS"]`` and the CORS allow-list (:mod:`.cors`): an origin allowed to
  call cross-origin must get past this check too;
- the request's own ``scheme://Host``, but only when that Host matched an exact ``ALLOWED_HOSTS``
  entry: a rebinding page's Origin always equals its Host, so a Host let in by ``"*"`` or by a
  pattern such as ``.example.com`` proves nothing;
- loopback origins (``localhost``, ``127.0.0.0/8``, ``[::1]``, any port) when the request itself
  names a loopback Host and arrived on a loopback address: local development and the MCP
  Inspector. A rebinding page cannot have a loopback Origin.

``"*"`` and patterns never make an origin trusted. No Origin (non-browser clients) is fine.
"""

from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.http.request import split_domain_port, validate_host

from ..conf import mcp_settings
from .cors import cors_listed
from .origins import DEFAULT_PORTS, is_loopback_name, loopback_request, normalise_origin, origin_hostname


def allowed_hosts() -> list[str]:
    """Django's ``ALLOWED_HOSTS``, with Django's own localhost allowance under ``DEBUG``."""
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


# Decisions per Host header value. Django's check (a regex split, then a pattern match per entry)
# was about 8% of an in-process stateless call in a profile; real traffic names a handful of
# hosts. The values are the client's, so the table is emptied when it fills rather than grown.
_host_decisions: dict[str, bool] = {}
HOST_DECISIONS_KEPT = 256


def host_is_allowed(host: str | None) -> bool:
    """Whether the ``Host`` header names this server."""
    if not host:
        return False
    decision = _host_decisions.get(host)
    if decision is None:
        domain, _port = split_domain_port(host)
        decision = bool(domain) and validate_host(domain, allowed_hosts())
        if len(_host_decisions) >= HOST_DECISIONS_KEPT:
            _host_decisions.clear()
        _host_decisions[host] = decision
    return decision


# Origins -------------------------------------------------------------------------------------


def is_exact_host(entry: str) -> bool:
    """An ``ALLOWED_HOSTS`` entry naming one host: neither ``*`` nor a ``.example.com`` pattern."""
    return bool(entry) and "*" not in entry and not entry.startswith(".")


@lru_cache(maxsize=1)
def exact_allowed_hosts() -> frozenset[str]:
    """The exact entries of ``ALLOWED_HOSTS``, lower-cased."""
    return frozenset(entry.lower() for entry in allowed_hosts() if is_exact_host(entry))


@lru_cache(maxsize=1)
def own_origins() -> frozenset[str]:
    """
    The origins trusted whatever the request: http and https on the default port of each exact
    ``ALLOWED_HOSTS`` entry, ``PUBLIC_BASE_URL``'s origin, and ``DJANGO_MCP["ALLOWED_ORIGINS"]``.
    """
    origins = {f"{scheme}://{host}" for host in exact_allowed_hosts() for scheme in DEFAULT_PORTS}
    configured = [mcp_settings.PUBLIC_BASE_URL, *mcp_settings.ALLOWED_ORIGINS]
    origins.update(filter(None, (normalise_origin(value, lenient=True) for value in configured)))
    return frozenset(origins)


def own_request_origin(host: str, scheme: str) -> str | None:
    """``scheme://Host`` of the request, when its Host matched an exact ``ALLOWED_HOSTS`` entry."""
    domain, port = split_domain_port(host)
    if domain not in exact_allowed_hosts():
        return None
    return normalise_origin(f"{scheme}://{domain}:{port}" if port else f"{scheme}://{domain}")


def origin_is_allowed(origin: str | None, host: str | None = None, scheme: str = "http", server: Any = None) -> bool:
    """
    Whether a request's ``Origin`` may talk to us (see the module docstring); ``host``, ``scheme``
    and ``server`` describe the request (its Host header, ASGI scheme and server address).
    """
    if origin is None:
        return True
    normalised = normalise_origin(origin)
    if normalised is None:
        return False
    if normalised in own_origins():
        return True
    if host and normalised == own_request_origin(host, scheme):
        return True
    if loopback_request(host, server) and is_loopback_name(origin_hostname(normalised)):
        return True
    return cors_listed(origin, normalised)


def _forget(**kwargs: Any) -> None:
    # Tests change ALLOWED_HOSTS, DEBUG and DJANGO_MCP; any change is rare enough to drop all.
    exact_allowed_hosts.cache_clear()
    own_origins.cache_clear()
    _host_decisions.clear()


setting_changed.connect(_forget)


# Content negotiation ---------------------------------------------------------------------------


# Clients send the same few Accept and Content-Type values on every request; parsing them once
# each saves two list-building parses per POST. Long values (rare, and a client's to choose) are
# parsed every time, so the cache stays small whatever is sent.
_CACHED_HEADER_LENGTH = 256


def _parse_media_types(header: str) -> tuple[str, ...]:
    return tuple(part.split(";", 1)[0].strip().lower() for part in header.split(",") if part.strip())


_cached_media_types = lru_cache(maxsize=64)(_parse_media_types)


def media_types(header: str | None) -> tuple[str, ...]:
    """The media types of an ``Accept`` or ``Content-Type`` header, parameters dropped, lower-cased."""
    if not header:
        return ()
    if len(header) > _CACHED_HEADER_LENGTH:
        return _parse_media_types(header)
    return _cached_media_types(header)


def accepts(header: str | None, media_type: str) -> bool:
    """Whether an ``Accept`` header allows ``media_type`` (wildcards included)."""
    types = media_types(header)
    if media_type in types or "*/*" in types:
        return True
    return f"{media_type.split('/', 1)[0]}/*" in types
