"""System checks for the usual OAuth mistakes (``manage.py check``)."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

from ..conf import mcp_settings


@register(Tags.security)
def check_oauth(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """django_mcp.oauth.E001, E002, W001, W003."""
    if not apps.is_installed("oauth2_provider"):
        return [Error("django_mcp.oauth needs django-oauth-toolkit.", id="django_mcp.oauth.E001",
                      hint='Add "oauth2_provider" to INSTALLED_APPS.')]
    from oauth2_provider.settings import oauth2_settings

    found: list[Any] = []
    if not oauth2_settings.PKCE_REQUIRED:
        found.append(Error("PKCE is turned off; MCP clients must use it (MCP spec 2025-11-25, basic/authorization).",
                           id="django_mcp.oauth.E002", hint='Leave OAUTH2_PROVIDER["PKCE_REQUIRED"] at True.'))
    if not oauth2_settings.COMPLIANT_BCP_RFC9700_PKCE_METHOD:
        found.append(Warning("The 'plain' PKCE method is accepted; it protects nothing (RFC 9700 section 2.1.1).",
                             id="django_mcp.oauth.W001",
                             hint='Set OAUTH2_PROVIDER["COMPLIANT_BCP_RFC9700_PKCE_METHOD"] = True, as '
                                  "django_mcp.oauth.provider.oauth2_provider_settings() does."))
    permissions = [f"{cls.__module__}.{cls.__qualname__}"
                   for cls in oauth2_settings.DCR_REGISTRATION_PERMISSION_CLASSES]
    if oauth2_settings.DCR_ENABLED and "oauth2_provider.dcr.IsAuthenticatedDCRPermission" in permissions:
        found.append(Warning("Dynamic client registration needs a logged-in user, which no MCP client is.",
                             id="django_mcp.oauth.W003",
                             hint='Use "django_mcp.oauth.registration.AllowMcpClients" in '
                                  'OAUTH2_PROVIDER["DCR_REGISTRATION_PERMISSION_CLASSES"].'))
    return found


@register(Tags.security, deploy=True)
def check_oauth_deployment(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """django_mcp.oauth.E003, W002, W004: what matters once DEBUG is off (``check --deploy``)."""
    if not apps.is_installed("oauth2_provider"):
        return []
    from oauth2_provider.settings import oauth2_settings

    found: list[Any] = []
    if not settings.DEBUG and not mcp_settings.PUBLIC_BASE_URL:
        found.append(Error("No public base URL with DEBUG off: OAuth metadata and token audiences would follow "
                           "whatever Host a request names.", id="django_mcp.oauth.E003",
                           hint='Set DJANGO_MCP["PUBLIC_BASE_URL"] = "https://your.host".'))
    elif not settings.DEBUG and str(mcp_settings.PUBLIC_BASE_URL).startswith("http://"):
        found.append(Warning("The public base URL is plain HTTP with DEBUG off; tokens would cross the network "
                             "unencrypted.", id="django_mcp.oauth.W002", hint="Serve the site over HTTPS."))
    permissions = [f"{cls.__module__}.{cls.__qualname__}"
                   for cls in oauth2_settings.DCR_REGISTRATION_PERMISSION_CLASSES]
    if (not settings.DEBUG and "http" in oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES
            and not any(path.startswith("django_mcp.oauth.registration.") for path in permissions)):
        found.append(Warning("HTTP redirect URIs are allowed for any host with DEBUG off; only loopback ones are "
                             "safe (RFC 8252 section 8.3).", id="django_mcp.oauth.W004",
                             hint="Use django_mcp.oauth.registration.AllowMcpClients, which allows HTTP for "
                                  "loopback redirects only."))
    return found
