"""
The resource server: bearer tokens on every HTTP transport (MCP spec 2025-11-25,
basic/authorization, "Access Token Usage" and "Token Handling").

:class:`OAuth2Authentication` accepts django-oauth-toolkit access tokens bound to this server
(RFC 8707), :class:`PersonalAccessTokenAuthentication` the tokens users make in the admin. Both
look the token up once per request on a worker thread, never on the event loop, and both answer a
missing or refused token with ``WWW-Authenticate: Bearer resource_metadata="…"`` pointing at the
endpoint's RFC 9728 document, with the scopes to ask for (RFC 6750 section 3).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs

from django.utils import timezone

from ..authentication import AuthenticationFailed, BaseAuthentication, IncomingRequest
from ..conf import mcp_settings
from ..threads import in_thread
from .resource import base_url_from_scope, is_this_resource, metadata_url, resource_path_for


def bearer_value(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive)."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip()


def token_in_query(request: IncomingRequest) -> bool:
    """An ``access_token`` query parameter: refused, since URLs end up in logs (RFC 6750 section 5.3)."""
    query = request.scope.get("query_string", b"")
    return bool(query) and "access_token" in parse_qs(query.decode("latin-1"), keep_blank_values=True)


def refuse(request: IncomingRequest, description: str, error: str = "invalid_token") -> AuthenticationFailed:
    """An :class:`AuthenticationFailed` whose challenge carries the RFC 6750 error."""
    request.challenge_params = {"error": error, "error_description": description}
    return AuthenticationFailed(f"Authentication failed: {description}")


def default_scope() -> str:
    """The scopes a client should ask for first: DOT's ``DEFAULT_SCOPES``."""
    from oauth2_provider.settings import oauth2_settings

    return " ".join(oauth2_settings._DEFAULT_SCOPES)


class BearerChallenge:
    """``authenticate_header``: the RFC 9728 challenge naming this endpoint's metadata document."""

    def authenticate_header(self, request: IncomingRequest) -> str | None:
        from oauth2_provider.www_authenticate import build_bearer_challenge

        params = dict(request.challenge_params)
        if "scope" not in params and params.get("error") != "invalid_request":
            scope = default_scope()
            if scope:
                params["scope"] = scope
        base = base_url_from_scope(request.scope)
        url = metadata_url(base, resource_path_for(request.scope.get("path", "")))
        return build_bearer_challenge(None, oauth2_error=params, resource_metadata_url=url)


class OAuth2Authentication(BearerChallenge, BaseAuthentication):
    """
    Access tokens issued by this site's django-oauth-toolkit. Refused with a 401: an unknown,
    expired or revoked token; a token of a deactivated user; a token bound to another resource;
    a token bound to none unless ``DJANGO_MCP["OAUTH_ACCEPT_UNBOUND_TOKENS"]`` (clients of
    2025-03-26 send no ``resource``); DOT's registration access tokens, which manage a client's
    registration and open nothing else. ``ctx.auth`` is the ``AccessToken``; its scopes are the
    request's.
    """

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        if token_in_query(request):
            raise refuse(request, "access tokens are not accepted in the URL", "invalid_request")
        value = bearer_value(request.headers.get("authorization"))
        if value is None:
            return None
        if value.startswith("mcp_pat_"):
            return None  # a personal access token: PersonalAccessTokenAuthentication's
        if not value:
            raise refuse(request, "empty bearer token")
        token = await _load_access_token(value)
        problem = self.refusal(token, request)
        if problem:
            raise refuse(request, problem)
        return token.user, token

    def refusal(self, token: Any, request: IncomingRequest) -> str | None:
        """Why ``token`` is not good here, or None. Override to add rules (a client allow-list…)."""
        from oauth2_provider.settings import oauth2_settings

        if token is None or token.is_expired():
            return "the access token is unknown, expired or revoked"
        if token.user is None or oauth2_settings.DCR_REGISTRATION_SCOPE in token.scope.split():
            return "this token does not grant access to the MCP server"
        if not token.user.is_active:
            return "the token's user is inactive"
        resources = token.resource or []
        if not resources:
            return None if mcp_settings.OAUTH_ACCEPT_UNBOUND_TOKENS else "the token names no resource"
        base = base_url_from_scope(request.scope)
        if not any(isinstance(uri, str) and is_this_resource(uri, base) for uri in resources):
            return "the token was issued for another resource"
        return None


@in_thread
def _load_access_token(value: str) -> Any:
    from oauth2_provider.models import get_access_token_model

    # DOT stores the SHA-256 of every token for lookups, also under hashed-at-rest storage.
    checksum = hashlib.sha256(value.encode("utf-8")).hexdigest()
    return (get_access_token_model().objects.select_related("user", "application")
            .filter(token_checksum=checksum).first())


class PersonalAccessTokenAuthentication(BearerChallenge, BaseAuthentication):
    """
    Personal access tokens (``mcp_pat_…``) from :class:`~django_mcp.oauth.models.PersonalAccessToken`:
    refused when unknown, revoked, expired, or when their user is inactive.
    """

    #: ``last_used`` is written at most this often per token, not on every request.
    LAST_USED_RESOLUTION = timedelta(minutes=1)

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        if token_in_query(request):
            raise refuse(request, "access tokens are not accepted in the URL", "invalid_request")
        value = bearer_value(request.headers.get("authorization"))
        if value is None or not value.startswith("mcp_pat_"):
            return None
        token = await _load_personal_token(value, self.LAST_USED_RESOLUTION)
        if token is None or not token.is_usable:
            raise refuse(request, "the personal access token is unknown, expired or revoked")
        if not token.user.is_active:
            raise refuse(request, "the token's user is inactive")
        return token.user, token


@in_thread
def _load_personal_token(value: str, resolution: timedelta) -> Any:
    from .models import PersonalAccessToken, token_digest

    token = PersonalAccessToken.objects.select_related("user").filter(digest=token_digest(value)).first()
    if token is not None and token.is_usable:
        now = timezone.now()
        if token.last_used is None or now - token.last_used > resolution:
            PersonalAccessToken.objects.filter(pk=token.pk).update(last_used=now)
            token.last_used = now
    return token
