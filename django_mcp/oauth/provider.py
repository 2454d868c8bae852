"""django-oauth-toolkit settings that real MCP clients pass."""

from __future__ import annotations

from typing import Any

from .scopes import MCP_SCOPES


def oauth2_provider_settings(**overrides: Any) -> dict[str, Any]:
    """
    ``OAUTH2_PROVIDER`` for an MCP server; keyword arguments override or add DOT settings::

        OAUTH2_PROVIDER = oauth2_provider_settings(ACCESS_TOKEN_EXPIRE_SECONDS=900)

    What it changes from DOT's defaults, and why:

    - the MCP scopes (:data:`~django_mcp.oauth.scopes.MCP_SCOPES`), all granted by default;
    - PKCE required and ``plain`` refused (MCP spec 2025-11-25, basic/authorization,
      "Authorization Code Protection"; RFC 9700 section 2.1.1);
    - only the authorization code and refresh grants, and the code response type, advertised
      (OAuth 2.1 drops implicit and password);
    - ``none`` advertised as a token endpoint auth method, since MCP clients are public clients;
    - dynamic client registration open to anonymous clients with safe redirect URIs
      (:class:`~django_mcp.oauth.registration.AllowMcpClients`) and client ID metadata documents on;
    - ``localhost`` accepted as a loopback redirect host beside 127.0.0.1 and ::1;
    - refresh tokens rotated and usable once: a refresh token that was already exchanged gets
      ``invalid_grant`` and revokes the rest of its grant, the newer refresh token and its access
      token included (no grace period, DOT's reuse protection; OAuth 2.1 draft section 4.3.1,
      RFC 9700 section 4.14.2: for public clients rotation is the replay protection). DOT's
      ``COMPLIANT_BCP_RFC9700_REFRESH_TOKEN`` gate is on, so ``check --deploy`` reports turning
      reuse protection off as ``oauth2_provider.E002``. ``REFRESH_TOKEN_GRACE_PERIOD_SECONDS=10``
      honours a superseded token again for that long, for clients that retry a refresh, and for
      a thief who replays one as well (docs/oauth.md, "Refresh tokens");
    - refresh tokens that expire 30 days after their access token (a client unused that long
      signs in again), so DOT's ``cleartokens`` can delete the revoked ones reuse detection keeps;
    - the validator that refuses tokens for other resources (:mod:`django_mcp.oauth.validators`).
    """
    settings: dict[str, Any] = {
        "SCOPES": dict(MCP_SCOPES),
        "DEFAULT_SCOPES": list(MCP_SCOPES),
        "PKCE_REQUIRED": True,
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
        "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
        "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
        "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
        "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
        "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
        "DCR_ENABLED": True,
        "DCR_REGISTRATION_PERMISSION_CLASSES": ("django_mcp.oauth.registration.AllowMcpClients",),
        "CIMD_ENABLED": True,
        "ALLOW_LOCALHOST_LOOPBACK": True,
        "ROTATE_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
        "REFRESH_TOKEN_REUSE_PROTECTION": True,
        "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
        "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
        "OAUTH2_VALIDATOR_CLASS": "django_mcp.oauth.validators.McpOAuth2Validator",
    }
    settings.update(overrides)
    return settings
