"""
A static API key header as an authentication class: the README's example of the seam, and what
the authentication tests drive over /mcp, /sse + /messages/ and stdio.

``X-Api-Key: <username>-key`` authenticates that (active) user; an unknown key is refused with a
401; no header leaves the request to the next class (anonymous in the end).
"""

from typing import Any

from django.contrib.auth import get_user_model

from django_mcp.authentication import AuthenticationFailed, BaseAuthentication, IncomingRequest


class ApiKey:
    """The credential: the key and the scopes it grants (``ctx.auth`` / ``ctx.scopes``)."""

    def __init__(self, key: str, scopes: frozenset[str]) -> None:
        self.key = key
        self.scopes = scopes


class ApiKeyAuthentication(BaseAuthentication):
    """``X-Api-Key: alice-key`` → alice, with the scopes ``mcp:read`` (and ``mcp:write`` for staff)."""

    header = "x-api-key"

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        key = request.headers.get(self.header)
        if key is None:
            return None
        username, _, suffix = key.rpartition("-")
        user = None
        if suffix == "key" and username:
            user = await get_user_model()._default_manager.filter(username=username, is_active=True).afirst()
        if user is None:
            raise AuthenticationFailed("Unknown API key")
        scopes = frozenset({"mcp:read", "mcp:write"} if user.is_staff else {"mcp:read"})
        return user, ApiKey(key, scopes)

    def authenticate_header(self, request: IncomingRequest) -> str:
        return 'ApiKey realm="mcp", header="X-Api-Key"'
