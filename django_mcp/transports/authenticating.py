"""
Who is asking, for :class:`~django_mcp.transports.base.HttpStreamConsumer`: the request's
authentication classes run once per request (``self.user``, ``self.auth``), a refused credential
gets a 401 with the refusing class's challenge, and a call that lacked a scope gets a 403 with an
``insufficient_scope`` challenge.
"""

from typing import Any

from ..authentication import (AuthenticationFailed, IncomingRequest, NotAuthenticated, authenticate, challenge,
                              get_authenticators)
from ..conf import mcp_settings
from ..signals import authentication_failed, tell


class AuthenticatingMixin:
    """Authentication of an HTTP request; the consumer provides the headers, scope and senders."""

    transport: str
    authentication_classes: Any
    scope: dict[str, Any]
    headers: dict[bytes, str]
    user: Any
    auth: Any

    def get_authenticators(self) -> list[Any]:
        """Instances of the authentication classes (DRF's ``get_authenticators``)."""
        return get_authenticators(self.authentication_classes)

    def incoming_request(self) -> IncomingRequest:
        return IncomingRequest(self.transport, scope=self.scope, raw_headers=self.headers)

    async def authenticate(self) -> bool:
        """
        Decide who is asking, once per request: ``self.user`` and ``self.auth``. A credential that
        is presented and refused gets a 401 whose ``WWW-Authenticate`` names the refusing class's
        scheme (see :func:`~django_mcp.authentication.challenge`).
        """
        authenticators = self.get_authenticators()
        request = self.incoming_request()
        try:
            self.user, self.auth = await authenticate(authenticators, request)
            if mcp_settings.REQUIRE_AUTHENTICATION and not self.user.is_authenticated:
                raise NotAuthenticated()
        except AuthenticationFailed as exc:
            tell(authentication_failed, type(self), transport=self.transport,
                 reason="not_authenticated" if isinstance(exc, NotAuthenticated) else "invalid_credential")
            header = challenge(authenticators, request, exc)
            await self.send_error(401, None, exc, [(b"www-authenticate", header.encode("latin-1"))] if header else None)
            return False
        return True

    async def refuse_for_scope(self, response: dict[str, Any], needed: frozenset[str]) -> None:
        """
        403 with an ``insufficient_scope`` challenge naming the scopes to ask for (RFC 6750
        section 3.1; MCP spec 2025-11-25, basic/authorization, "Scope Challenge Handling").
        """
        authenticators = self.get_authenticators()
        request = self.incoming_request()
        request.challenge_params = {"error": "insufficient_scope", "scope": " ".join(sorted(needed))}
        header = challenge(authenticators, request)
        error = {"code": response["error"]["code"], "message": "Insufficient scope: this request needs the scopes "
                 + " ".join(sorted(needed)), "data": {"requiredScopes": sorted(needed)}}
        await self.send_json(403, {"jsonrpc": "2.0", "id": response.get("id"), "error": error},
                             [(b"www-authenticate", header.encode("latin-1"))] if header else None)
