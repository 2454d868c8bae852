"""
Who may register a client (RFC 7591), as django-oauth-toolkit permission classes for
``OAUTH2_PROVIDER["DCR_REGISTRATION_PERMISSION_CLASSES"]``.

MCP clients register anonymously (MCP spec 2025-11-25, basic/authorization, "Dynamic Client
Registration"); DOT's default, a logged-in user, stops every one of them. :class:`AllowMcpClients`
lets them in with redirect URIs that are safe for public clients: loopback ones on any port
(RFC 8252 section 7.3) and HTTPS. :class:`AllowListedRedirectHosts` also limits HTTPS redirects to
``DJANGO_MCP["OAUTH_ALLOWED_REDIRECT_HOSTS"]``. Write your own class (``has_permission(request)``)
for any other policy; a registered client can also be switched off in the admin.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any
from urllib.parse import urlsplit

from ..conf import mcp_settings


LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uris_of(request: Any) -> list[Any] | None:
    """The ``redirect_uris`` of a registration request; None when the body is unreadable."""
    try:
        metadata = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(metadata, dict):
        return None
    uris = metadata.get("redirect_uris", [])
    return uris if isinstance(uris, list) else None


class AllowMcpClients:
    """Anyone may register, with loopback (any port) and HTTPS redirect URIs only."""

    def has_permission(self, request: Any) -> bool:
        uris = redirect_uris_of(request)
        if uris is None:
            return True  # let DOT answer the malformed body with invalid_client_metadata
        return all(isinstance(uri, str) and self.redirect_allowed(urlsplit(uri)) for uri in uris)

    def redirect_allowed(self, parts: Any) -> bool:
        if parts.fragment:
            return False  # RFC 6749 section 3.1.2
        if parts.scheme == "http":
            return is_loopback(parts.hostname)
        if parts.scheme == "https":
            return bool(parts.hostname)
        # Native apps' private-use schemes (cursor://, vscode://) pass when DOT allows the scheme.
        from oauth2_provider.settings import oauth2_settings

        return parts.scheme in oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES


class AllowListedRedirectHosts(AllowMcpClients):
    """As :class:`AllowMcpClients`, but HTTPS redirects only to ``OAUTH_ALLOWED_REDIRECT_HOSTS``."""

    def redirect_allowed(self, parts: Any) -> bool:
        if parts.scheme == "https":
            allowed = mcp_settings.OAUTH_ALLOWED_REDIRECT_HOSTS
            return not parts.fragment and parts.hostname in allowed
        return super().redirect_allowed(parts)
