"""
How the example authenticates MCP clients that are not browsers: a static API key per user,
sent as ``X-Api-Key``, mapped to a username by the ``LIBRARY_API_KEYS`` setting. Any scheme plugs
into django_mcp the same way (``DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]``); OAuth is one more.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from django_mcp.authentication import AuthenticationFailed, BaseAuthentication, IncomingRequest


class ApiKeyAuthentication(BaseAuthentication):
    """``X-Api-Key: <key>`` → the active user ``LIBRARY_API_KEYS[key]`` names; no header → next class."""

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        key = request.headers.get("x-api-key")
        if key is None:
            return None
        username = settings.LIBRARY_API_KEYS.get(key)
        user = None
        if username is not None:
            user = await get_user_model()._default_manager.filter(username=username, is_active=True).afirst()
        if user is None:
            raise AuthenticationFailed("Unknown API key")
        return user, None

    def authenticate_header(self, request: IncomingRequest) -> str:
        return 'ApiKey realm="library", header="X-Api-Key"'
