"""
Which URLs identify this MCP server as an OAuth protected resource (RFC 8707, RFC 9728).

The server's endpoints are one protected resource with three names: the origin itself, the
Streamable HTTP endpoint (``/mcp``) and the 2024-11-05 HTTP+SSE endpoint (``/sse``, whose
``/messages/`` posts belong to it). Clients take the resource to be the URL they connect to
(MCP spec 2025-11-25, basic/authorization, "Canonical Server URI"), so a token bound to any of the
three is accepted at every endpoint, and each endpoint's 401 points at the metadata document
naming its own URL. Everything is derived from ``DJANGO_MCP["PUBLIC_BASE_URL"]``, or from the
request's scheme and Host when it is unset (development).
"""

from __future__ import annotations

from typing import Any

from ..conf import mcp_settings
from ..public_urls import configured_base_url as _configured_base


WELL_KNOWN_RESOURCE = "/.well-known/oauth-protected-resource"


def base_url_from_scope(scope: dict[str, Any]) -> str:
    """The public base URL for an ASGI request."""
    base = _configured_base()
    if base:
        return base
    host = ""
    for name, value in scope.get("headers", []):
        if name.lower() == b"host":
            host = value.decode("latin-1")
    if not host and scope.get("server"):
        server_host, port = scope["server"][:2]
        host = f"{server_host}:{port}"
    return f"{scope.get('scheme', 'http')}://{host}"


def endpoint_paths() -> dict[str, str]:
    """Endpoint name → its path: ``{"mcp": "/mcp", "sse": "/sse"}`` (SSE only when it is served)."""
    paths = {"mcp": "/" + mcp_settings.MCP_PATH.strip("/")}
    if mcp_settings.SSE_PATH:
        paths["sse"] = "/" + mcp_settings.SSE_PATH.strip("/")
    return paths


def resource_path_for(request_path: str) -> str:
    """The resource an endpoint's 401 names: ``/sse`` for the HTTP+SSE pair, else ``/mcp``."""
    paths = endpoint_paths()
    wanted = request_path.rstrip("/")
    messages = "/" + (mcp_settings.SSE_MESSAGES_PATH or "").strip("/")
    if "sse" in paths and wanted in (paths["sse"], messages.rstrip("/")):
        return paths["sse"]
    return paths["mcp"]


def resource_identifiers(base: str) -> frozenset[str]:
    """Every identifier a token may be bound to here, without trailing slashes."""
    return frozenset({base, *(base + path for path in endpoint_paths().values())})


def is_this_resource(uri: str, base: str) -> bool:
    """Whether ``uri`` names this server (with or without a trailing slash)."""
    return uri.rstrip("/") in resource_identifiers(base)


def metadata_url(base: str, resource_path: str = "") -> str:
    """The RFC 9728 document of a resource: the well-known prefix, then the resource's path."""
    return base + WELL_KNOWN_RESOURCE + resource_path.rstrip("/")
