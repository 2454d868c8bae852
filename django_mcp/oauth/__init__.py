"""
OAuth 2.1 for the MCP endpoints, on django-oauth-toolkit (MCP spec 2025-11-25, basic/authorization).

django-oauth-toolkit (DOT) is the authorization server: authorization code + PKCE, tokens,
refresh rotation, revocation, dynamic client registration (RFC 7591) and client ID metadata
documents. This app is the MCP glue around it:

- :class:`~django_mcp.oauth.authentication.OAuth2Authentication`, the resource server on every
  HTTP transport: bearer tokens checked against this server's resource identifiers (RFC 8707);
- :class:`~django_mcp.oauth.authentication.PersonalAccessTokenAuthentication`, tokens a user
  creates in the admin for clients that cannot do OAuth;
- ``django_mcp.oauth.urls``: the RFC 9728 and RFC 8414 metadata at the origin's root, DOT's
  endpoints under ``oauth/``, the 2025-03-26 fallback endpoints, a lenient registration view;
- :func:`~django_mcp.oauth.provider.oauth2_provider_settings`, DOT settings real clients pass;
- a consent page (``django_mcp/oauth/authorize.html``) and system checks.

Settings, in short::

    INSTALLED_APPS += ["oauth2_provider", "django_mcp.oauth"]
    OAUTH2_PROVIDER = oauth2_provider_settings()
    DJANGO_MCP = {
        "PUBLIC_BASE_URL": "https://mcp.example.com",
        "REQUIRE_AUTHENTICATION": True,
        "DEFAULT_AUTHENTICATION_CLASSES": ["django_mcp.oauth.authentication.OAuth2Authentication",
                                           "django_mcp.oauth.authentication.PersonalAccessTokenAuthentication"],
    }
    # urls.py
    urlpatterns += [path("", include("django_mcp.oauth.urls"))]

Nothing here is imported by ``django_mcp`` itself: projects without OAuth never load DOT's models.
"""
