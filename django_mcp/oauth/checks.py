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


@register(Tags.security)
def check_external_issuers(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """``OAUTH_EXTERNAL_ISSUERS``: entries a token could never match, or that would trust too much."""
    from .external.issuers import ASYMMETRIC_ALGORITHMS, SETTING_KEYS, USER_CLAIMS

    messages: list[Any] = []
    configured = mcp_settings.OAUTH_EXTERNAL_ISSUERS or []
    if not isinstance(configured, (list, tuple)):
        return [Error('DJANGO_MCP["OAUTH_EXTERNAL_ISSUERS"] must be a list of dicts.', id="django_mcp.oauth.E004")]
    for index, entry in enumerate(configured):
        where = f'DJANGO_MCP["OAUTH_EXTERNAL_ISSUERS"][{index}]'
        if not isinstance(entry, dict) or not isinstance(entry.get("issuer"), str):
            messages.append(Error(f'{where} needs "issuer", the tokens\' iss.', id="django_mcp.oauth.E004",
                                  hint='{"issuer": "https://login.example.com/realms/acme"}'))
            continue
        for name in sorted(set(entry) - SETTING_KEYS):
            messages.append(Error(f"{where} has an unknown key {name!r}.", id="django_mcp.oauth.E004",
                                  hint=f"Known keys: {', '.join(sorted(SETTING_KEYS))}."))
        algorithms = entry.get("algorithms") or []
        weak = sorted(set(algorithms) - ASYMMETRIC_ALGORITHMS)
        if weak:
            messages.append(Error(
                f"{where} allows {', '.join(weak)}: only asymmetric signatures are accepted (RFC 8725 3.1).",
                id="django_mcp.oauth.E005", hint="RS256, PS256, ES256 or EdDSA, as the issuer signs."))
        if entry.get("user_claim", "sub") not in USER_CLAIMS:
            messages.append(Error(f'{where}["user_claim"] must be one of {", ".join(sorted(USER_CLAIMS))}.',
                                  id="django_mcp.oauth.E004"))
        for key in ("issuer", "jwks_uri"):
            url = entry.get(key)
            if isinstance(url, str) and not url.startswith("https://") and not settings.DEBUG:
                messages.append(Error(
                    f'{where}["{key}"] is not https://: keys fetched over plain HTTP can be replaced on the way.',
                    id="django_mcp.oauth.E006", hint="Use the issuer's https:// URL (http:// only with DEBUG)."))
    return messages
