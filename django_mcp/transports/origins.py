"""
Origins as the HTTP transports compare them: an ``Origin`` header's serialisation (RFC 6454
section 6.1) normalised, its host, and what counts as loopback. The Origin check
(:mod:`.security`) and CORS (:mod:`.cors`) both build on these.
"""

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from django.http.request import split_domain_port


DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_origin(value: str | None, *, lenient: bool = False) -> str | None:
    """
    ``scheme://host[:port]`` lower-cased, default ports dropped; None unless ``value`` is an http(s)
    origin. An ``Origin`` header is exactly that serialisation (RFC 6454 section 6.1), so anything
    more is refused; ``lenient`` (for settings) accepts a URL and keeps only its origin.
    """
    if not value:
        return None
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    if not lenient and (parts.path or parts.query or parts.fragment or value != value.strip()):
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def origin_hostname(origin: str) -> str:
    """The host of a normalised origin, brackets of an IPv6 address removed."""
    netloc = origin.split("://", 1)[1]
    if netloc.startswith("["):
        return netloc[1:netloc.index("]")]
    return netloc.rsplit(":", 1)[0]


def is_loopback_name(name: str) -> bool:
    """``localhost`` or a loopback IP address (no brackets, no port)."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def loopback_request(host: str | None, server: Any) -> bool:
    """
    Whether the request names a loopback Host and arrived on a loopback address (the ASGI
    ``server`` of the connection): a browser on this machine talking to a server bound to loopback.
    """
    if not host or not server or not isinstance(server[0], str):
        return False
    domain, _port = split_domain_port(host)
    return is_loopback_name(domain.strip("[]")) and is_loopback_name(server[0])
