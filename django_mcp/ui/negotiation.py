"""
Whether a request's client shows views, and the extension's capability (SEP-2133, "Negotiation";
ext-apps specification, "Client<>Server Capability Negotiation"): a client declares
``extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": ["text/html;profile=mcp-app"]}`` — in
``initialize`` (2025-11-25) or in each request's ``_meta`` (2026-07-28) — and the server advertises
``{}`` under the same key in ``initialize`` or ``server/discover``.
"""

from __future__ import annotations

from typing import Any

from ..conf import mcp_settings
from ..protocol.context import RequestContext
from ..protocol.extensions import ProtocolExtension
from .constants import EXTENSION, MIME_TYPE


def shows_views(request: RequestContext) -> bool:
    """Whether the request's client declared the extension with the view MIME type."""
    extensions = (request.client_capabilities or {}).get("extensions")
    settings = extensions.get(EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(settings, dict):
        return False
    mime_types = settings.get("mimeTypes")
    return isinstance(mime_types, list) and MIME_TYPE in mime_types


def may_use_app_only_tools(request: RequestContext) -> bool:
    """
    Whether the request may see and call tools only views call (``visibility: ["app"]``): its
    client declared the extension, or ``DJANGO_MCP["APP_ONLY_TOOLS_FOR_EVERY_CLIENT"]`` is on.
    """
    return mcp_settings.APP_ONLY_TOOLS_FOR_EVERY_CLIENT or shows_views(request)


class UiExtension(ProtocolExtension):
    """Advertises the extension in both eras (the core's default is 2026-07-28 only)."""

    identifier = EXTENSION

    def contribute_capabilities(self, capabilities: dict[str, Any], ctx: RequestContext) -> None:
        capabilities.setdefault("extensions", {})[EXTENSION] = {}
