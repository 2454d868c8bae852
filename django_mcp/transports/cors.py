"""
CORS for the HTTP endpoints (Fetch standard, "CORS protocol",
https://fetch.spec.whatwg.org/#http-cors-protocol), so that browser-based MCP clients such as the
MCP Inspector's web UI can call ``/mcp``, ``/sse`` and ``/messages/`` from another origin.

Which origins may: ``DJANGO_MCP["CORS_ALLOWED_ORIGINS"]``. When it is None (the default), those of
django-cors-headers (``CORS_ALLOWED_ORIGINS`` and ``CORS_ALLOWED_ORIGIN_REGEXES``) if that app is
installed, else ``DJANGO_MCP["ALLOWED_ORIGINS"]``; and, while it is None, loopback origins calling
a server on loopback (local development; see :mod:`.security`, which consults this module). ``"*"`` is never honoured, nor is
the ``null`` origin: every origin allowed here is trusted by the Origin check too, and a wildcard
would switch off the DNS-rebinding protection. No ``Access-Control-Allow-Credentials``: MCP clients
send bearer tokens in ``Authorization``, and a page must not ride on the user's session cookie.

A preflight is answered before authentication (it carries no credentials) and before the body is
read; an allowed origin's actual responses, errors and 401s included, carry
``Access-Control-Allow-Origin`` and expose the headers MCP clients read.
"""

import re
from functools import lru_cache
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.signals import setting_changed

from ..conf import mcp_settings
from .origins import is_loopback_name, loopback_request, normalise_origin, origin_hostname


#: Request headers an MCP client sends (MCP spec 2025-11-25, basic/transports#streamable-http;
#: MCP spec 2026-07-28, basic/transports/streamable-http for the mirrored ``Mcp-*`` headers).
REQUEST_HEADERS = frozenset({
    "content-type", "accept", "authorization", "mcp-session-id", "mcp-protocol-version", "last-event-id",
    "mcp-method", "mcp-name",
})
#: ``Mcp-Param-<name>`` headers mirror tool arguments; a preflight lists each one by name.
REQUEST_HEADER_PREFIX = "mcp-param-"
#: Response headers a page may read: the session, the OAuth challenge (browser OAuth clients
#: start their flow from it) and the negotiated revision.
EXPOSED_HEADERS = b"Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version"

# A header name is an RFC 9110 token (section 5.6.2); nothing else is ever echoed back.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+")


@lru_cache(maxsize=1)
def cors_lists() -> tuple[frozenset[str], tuple[re.Pattern[str], ...]]:
    """The exact origins (normalised) and the origin regexes allowed to call cross-origin."""
    configured = mcp_settings.CORS_ALLOWED_ORIGINS
    patterns: tuple[re.Pattern[str], ...] = ()
    if configured is None:
        if apps.is_installed("corsheaders"):
            # django-cors-headers' settings, with the older names it still reads as fallbacks.
            configured = getattr(settings, "CORS_ALLOWED_ORIGINS", getattr(settings, "CORS_ORIGIN_WHITELIST", ()))
            regexes = getattr(settings, "CORS_ALLOWED_ORIGIN_REGEXES",
                              getattr(settings, "CORS_ORIGIN_REGEX_WHITELIST", ()))
            patterns = tuple(re.compile(pattern) for pattern in regexes)
        else:
            configured = mcp_settings.ALLOWED_ORIGINS
    exact = frozenset(filter(None, (normalise_origin(origin, lenient=True) for origin in configured)))
    return exact, patterns


def cors_listed(origin: str, normalised: str) -> bool:
    """
    Whether the allow-list names ``origin`` (its normalised form exactly, or the header matching a
    regex with ``re.match``, as django-cors-headers matches them).
    """
    exact, patterns = cors_lists()
    return normalised in exact or any(pattern.match(origin) for pattern in patterns)


def cors_allows(origin: str, host: str | None = None, server: Any = None) -> bool:
    """Whether a page from ``origin`` may call this request's endpoint (``host``/``server``: the request's)."""
    normalised = normalise_origin(origin)
    if normalised is None:
        return False
    if cors_listed(origin, normalised):
        return True
    return (mcp_settings.CORS_ALLOWED_ORIGINS is None and loopback_request(host, server)
            and is_loopback_name(origin_hostname(normalised)))


def is_preflight(method: str, headers: dict[bytes, str]) -> bool:
    """An ``OPTIONS`` request with ``Origin`` and ``Access-Control-Request-Method`` (Fetch, CORS-preflight request)."""
    return method == "OPTIONS" and b"origin" in headers and b"access-control-request-method" in headers


def header_names(value: str | None) -> list[str]:
    """The names of an ``Access-Control-Request-Headers`` list, lower-cased, malformed ones dropped."""
    names = (name.strip().lower() for name in (value or "").split(","))
    return list(dict.fromkeys(name for name in names if _TOKEN.fullmatch(name)))


def allowed_request_headers(value: str | None) -> list[str]:
    """The requested header names an MCP client may send; the browser refuses the rest itself."""
    return [name for name in header_names(value) if name in REQUEST_HEADERS
            or (name.startswith(REQUEST_HEADER_PREFIX) and len(name) > len(REQUEST_HEADER_PREFIX))]


def max_age_header() -> list[tuple[bytes, bytes]]:
    """``Access-Control-Max-Age`` from ``DJANGO_MCP["CORS_MAX_AGE"]``; none when that is None."""
    max_age = mcp_settings.CORS_MAX_AGE
    return [] if max_age is None else [(b"access-control-max-age", str(int(max_age)).encode())]


def preflight_headers(origin: str, requested_headers: str | None, methods: Any) -> list[tuple[bytes, bytes]]:
    """The answer to an allowed preflight: the origin, the endpoint's methods, the MCP headers asked for."""
    headers = [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-allow-methods", ", ".join(methods).encode()),
        # The answer depends on all three request headers (Fetch, "CORS protocol and HTTP caches").
        (b"vary", b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
        *max_age_header(),
    ]
    allowed = allowed_request_headers(requested_headers)
    if allowed:
        headers.append((b"access-control-allow-headers", ", ".join(allowed).encode()))
    return headers


def response_headers(origin: str) -> list[tuple[bytes, bytes]]:
    """What an allowed origin's actual responses carry."""
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", EXPOSED_HEADERS),
        (b"vary", b"Origin"),
    ]


def _forget(**kwargs: Any) -> None:
    cors_lists.cache_clear()


setting_changed.connect(_forget)
