"""django-oauth-toolkit's request validator, refusing tokens for resources other than this server's (and those it serves)."""

from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from ..conf import mcp_settings
from .resource import _configured_base, is_this_resource


def base_url_from_oauthlib(request: Any) -> str:
    """The public base URL, from an oauthlib request (DOT copies the Django request's META)."""
    base = _configured_base()
    if base:
        return base
    headers = request.headers or {}
    scheme = "https" if headers.get("X_DJANGO_OAUTH_TOOLKIT_SECURE") else "http"
    return f"{scheme}://{headers.get('HTTP_HOST') or headers.get('SERVER_NAME', '')}"


class McpOAuth2Validator(OAuth2Validator):
    """
    Issues tokens only for this MCP server, and for the other MCP servers it is the authorization
    server of (``OAUTH_OTHER_RESOURCES``): a token request naming another resource (RFC 8707), or
    inheriting one from its grant, is refused with ``invalid_target`` before a token exists.
    The MCP endpoints check the binding again (MCP spec 2025-11-25, basic/authorization,
    "Token Audience Binding and Validation").
    """

    def _validate_resource_uris(self, request: Any, resources: Any) -> None:
        super()._validate_resource_uris(request, resources)
        base = base_url_from_oauthlib(request)
        others = {uri.rstrip("/") for uri in mcp_settings.OAUTH_OTHER_RESOURCES or []}
        for resource in resources:
            if not is_this_resource(resource, base) and resource.rstrip("/") not in others:
                raise errors.CustomOAuth2Error(
                    error="invalid_target", request=request,
                    description=f"This server issues tokens for its own MCP endpoints only, not for {resource!r}.")
