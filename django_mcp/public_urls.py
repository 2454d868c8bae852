"""
The public base URL clients reach the server at (scheme and host, no path): ``DJANGO_MCP
["PUBLIC_BASE_URL"]`` when set, which a deployment behind a proxy needs, else the request's own
scheme and Host (development). OAuth's resource metadata and the Server Card both name the server
by it, so they agree.
"""

from __future__ import annotations

from typing import Any

from .conf import mcp_settings


def configured_base_url() -> str | None:
    """``DJANGO_MCP["PUBLIC_BASE_URL"]`` without a trailing slash, or None when it is unset."""
    base = mcp_settings.PUBLIC_BASE_URL
    return str(base).rstrip("/") if base else None


def base_url_from_request(request: Any) -> str:
    """The public base URL for a Django request: the setting, else the request's scheme and Host."""
    return configured_base_url() or f"{request.scheme}://{request.get_host()}"
