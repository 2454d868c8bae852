"""
:class:`ExternalTokenAuthentication`: bearer tokens of the trusted outside issuers — JWTs verified
here, opaque ones asked about at the issuers that introspect. List it before
:class:`~django_mcp.oauth.authentication.OAuth2Authentication`: a JWT of an issuer not trusted, or
an opaque token no introspecting issuer calls active, is passed on to the next class (this site's
own tokens are opaque).
"""

from __future__ import annotations

from typing import Any

from ...authentication import BaseAuthentication, IncomingRequest
from ...threads import in_thread
from ..authentication import BearerChallenge, bearer_value, refuse, token_in_query
from ..models import TOKEN_PREFIX
from ..resource import base_url_from_scope, resource_identifiers
from .access_tokens import ExternalAccessToken, TokenRefused, UnknownKey, unverified_claims, verify
from .introspection import introspections, token_from_answer
from .issuers import Issuer, trusted_issuers
from .keys import IssuerUnavailable, key_sets
from .users import user_for


class ExternalTokenAuthentication(BearerChallenge, BaseAuthentication):
    """
    Access tokens of the authorization servers in ``DJANGO_MCP["OAUTH_EXTERNAL_ISSUERS"]``: a JWT's
    signature checked against the issuer's published keys, an opaque token's state asked of the
    issuers with introspection credentials (RFC 7662); then ``iss``, ``exp``/``nbf`` and ``aud``
    (this server's resource URLs unless the issuer's ``audience`` says otherwise), and the user
    found by the issuer's ``user_claim``. Refused with a 401 and the RFC 9728 challenge; ``ctx.auth`` is an
    :class:`~django_mcp.oauth.external.ExternalAccessToken`, whose scopes are the request's.
    Override :meth:`update_user` to bring the token's claims into the user (groups, permissions).
    """

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        if token_in_query(request):
            raise refuse(request, "access tokens are not accepted in the URL", "invalid_request")
        value = bearer_value(request.headers.get("authorization"))
        if not value or value.startswith(TOKEN_PREFIX):
            return None
        claims = unverified_claims(value)
        issuer = trusted_issuers().get(claims.get("iss")) if claims is not None else None  # type: ignore[arg-type]
        try:
            if issuer is not None:
                token = await self._verified(value, issuer, self._audiences(issuer, request))
            else:
                found = await self._introspected(value, request)
                if found is None:
                    return None  # no trusted issuer knows it: the next class's to judge
                issuer, token = found
            user = await _find_user(self, issuer, token)
        except IssuerUnavailable:
            raise refuse(request, "the issuer cannot be reached now") from None
        except TokenRefused as exc:
            raise refuse(request, str(exc)) from None
        return user, token

    def _audiences(self, issuer: Issuer, request: IncomingRequest) -> Any:
        return issuer.audience or resource_identifiers(base_url_from_scope(request.scope))

    async def _introspected(self, value: str, request: IncomingRequest) -> tuple[Issuer, ExternalAccessToken] | None:
        """The first issuer (of those with introspection credentials) that calls the token active, and the token."""
        for issuer in trusted_issuers().values():
            if not issuer.introspects:
                continue
            try:
                answer = await introspections.answer(issuer, value)
            except (OSError, ValueError) as exc:  # unreachable, refused (urllib's errors), not JSON
                raise IssuerUnavailable(str(exc)) from exc
            if answer.get("active") is True:
                return issuer, token_from_answer(answer, issuer, self._audiences(issuer, request))
        return None

    async def _verified(self, value: str, issuer: Issuer, audiences: Any) -> ExternalAccessToken:
        try:
            return verify(value, issuer, await key_sets.keys(issuer), audiences)
        except UnknownKey:
            # The issuer may have rotated its keys since they were fetched: fetch again (within the floor).
            return verify(value, issuer, await key_sets.keys(issuer, unknown_key=True), audiences)

    def update_user(self, user: Any, token: ExternalAccessToken, created: bool) -> None:
        """
        Called on a worker thread for each request's user, after it was found (or made:
        ``created``); the default does nothing. Map claims to groups here; it runs on every
        request, so write only what changed::

            def update_user(self, user, token, created):
                wanted = {name for name in token.claims.get("groups", []) if name in MANAGED}
                if wanted != set(user.groups.filter(name__in=MANAGED).values_list("name", flat=True)):
                    user.groups.set(Group.objects.filter(name__in=wanted))
        """


@in_thread
def _find_user(authentication: ExternalTokenAuthentication, issuer: Issuer, token: ExternalAccessToken) -> Any:
    user, created = user_for(issuer, token)
    authentication.update_user(user, token, created)
    return user


__all__ = ["ExternalTokenAuthentication"]
