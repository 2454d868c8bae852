"""
Every OAuth URL an MCP client needs, mounted at the site's root::

    urlpatterns = [path("", include("django_mcp.oauth.urls")), ...]

- ``/.well-known/oauth-protected-resource[/mcp|/sse]``: RFC 9728 metadata (exempt from
  authentication, as MCP clients read it before they have a token);
- ``/.well-known/oauth-authorization-server``: RFC 8414 metadata;
- ``/oauth/authorize/``, ``/oauth/token/``, ``/oauth/revoke/``, ``/oauth/introspect/``,
  ``/oauth/register/`` (RFC 7591) and ``/oauth/register/<client_id>/`` (RFC 7592);
- ``/authorize``, ``/token``, ``/register``: the defaults 2025-03-26 clients fall back to when they
  find no metadata (MCP spec 2025-03-26, basic/authorization);
- with DOT's ``OIDC_ENABLED``: OpenID Connect discovery, its keys and userinfo.

The URL names live in DOT's ``oauth2_provider`` namespace, so DOT's own ``reverse()`` calls find
them: do not include ``oauth2_provider.urls`` beside this module.
"""

from django.urls import path, re_path
from oauth2_provider import views as dot
from oauth2_provider.settings import oauth2_settings

from . import views


app_name = "oauth2_provider"

urlpatterns = [
    path(".well-known/oauth-protected-resource", views.McpResourceMetadataView.as_view(),
         name="oauth-resource-metadata"),
    path(".well-known/oauth-protected-resource/<path:resource_path>", views.McpResourceMetadataView.as_view(),
         name="oauth-resource-metadata-path"),
    path(".well-known/oauth-authorization-server", views.McpServerMetadataView.as_view(),
         name="oauth-server-metadata"),
    path("oauth/authorize/", views.McpAuthorizationView.as_view(), name="authorize"),
    path("oauth/token/", dot.TokenView.as_view(), name="token"),
    path("oauth/revoke/", dot.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/introspect/", dot.IntrospectTokenView.as_view(), name="introspect"),
    path("oauth/register/", views.McpClientRegistrationView.as_view(), name="dcr-register"),
    path("oauth/register/<str:client_id>/", dot.DynamicClientRegistrationManagementView.as_view(),
         name="dcr-register-management"),
    # 2025-03-26 fallbacks.
    path("authorize", views.legacy_authorize_redirect, name="legacy-authorize"),
    path("token", dot.TokenView.as_view(), name="legacy-token"),
    path("register", views.McpClientRegistrationView.as_view(), name="legacy-register"),
]

if oauth2_settings.OIDC_ENABLED:
    # OpenID Connect discovery and keys, where the project turned DOT's OIDC on.
    urlpatterns += [
        re_path(r"^\.well-known/openid-configuration/?$", dot.ConnectDiscoveryInfoView.as_view(),
                name="oidc-connect-discovery-info"),
        path(".well-known/jwks.json", dot.JwksInfoView.as_view(), name="jwks-info"),
        path("oauth/userinfo/", dot.UserInfoView.as_view(), name="user-info"),
    ]
