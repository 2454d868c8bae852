"""
The OAuth views MCP clients meet: metadata documents, the consent page, client registration.

Each is django-oauth-toolkit's view with the MCP parts changed: the documents name this server's
public URLs (``DJANGO_MCP["PUBLIC_BASE_URL"]``), the consent page is a template of ours, and
registration forgives what real clients are known to send.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.compat import login_not_required
from oauth2_provider.views import (AuthorizationView, DynamicClientRegistrationView, OAuthProtectedResourceMetadataView,
                                   OAuthServerMetadataView)

from ..conf import mcp_settings
from ..icons import valid_icons
from ..public_urls import base_url_from_request
from ..transports.cors import header_names
from .resource import endpoint_paths


class PublicMetadataCorsMixin:
    """
    CORS preflights of a public metadata document. DOT serves the documents themselves with
    ``Access-Control-Allow-Origin: *`` (they name public URLs only, and are read without
    credentials); MCP clients also send ``MCP-Protocol-Version`` when they fetch them (MCP spec
    2025-03-26, basic/authorization#server-metadata-discovery-headers), which makes a browser ask
    first with ``OPTIONS``.
    """

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().options(request, *args, **kwargs)  # type: ignore[misc]
        response["Access-Control-Allow-Origin"] = "*"
        if "Access-Control-Request-Method" in request.headers:
            response["Access-Control-Allow-Methods"] = "GET, OPTIONS"
            requested = header_names(request.headers.get("Access-Control-Request-Headers"))
            if requested:
                # Any header may be sent for a public document; echoed rather than "*", which older browsers ignore.
                response["Access-Control-Allow-Headers"] = ", ".join(requested)
            if mcp_settings.CORS_MAX_AGE is not None:
                response["Access-Control-Max-Age"] = str(int(mcp_settings.CORS_MAX_AGE))
            patch_vary_headers(response, ["Access-Control-Request-Headers"])
        return response


class McpServerMetadataView(PublicMetadataCorsMixin, OAuthServerMetadataView):
    """
    RFC 8414 metadata at ``/.well-known/oauth-authorization-server``, with the issuer and every
    endpoint on the public base URL, so a client behind a proxy is never sent to an inner host.
    """

    def _get_endpoint_url(self, request: HttpRequest, view_name: str, required: bool = False) -> str | None:
        url = super()._get_endpoint_url(request, view_name, required)
        if url is None:
            return None
        return base_url_from_request(request) + urlsplit(url).path

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().get(request, *args, **kwargs)
        data = json.loads(response.content)
        data["issuer"] = base_url_from_request(request)
        result = JsonResponse(data)
        result["Access-Control-Allow-Origin"] = "*"
        return result


class McpResourceMetadataView(PublicMetadataCorsMixin, OAuthProtectedResourceMetadataView):
    """
    RFC 9728 metadata for this server: at the root (``resource`` is the origin) and at
    ``/.well-known/oauth-protected-resource/mcp`` (and ``/sse``), where ``resource`` is that
    endpoint's URL, the form MCP clients look for first (MCP spec 2025-11-25,
    basic/authorization, "Protected Resource Metadata Discovery Requirements").
    """

    def get_resource(self, request: HttpRequest) -> str:
        base = base_url_from_request(request)
        suffix = "/" + self.kwargs.get("resource_path", "").strip("/")
        if suffix == "/":
            return base
        if suffix not in endpoint_paths().values():
            raise Http404("No such protected resource")
        return base + suffix

    def get_authorization_servers(self, request: HttpRequest) -> list[str]:
        # The outside issuers whose tokens ExternalTokenAuthentication accepts, then this site,
        # which is an authorization server too (its RFC 8414 issuer is the base URL). Clients take
        # the first they can use (RFC 9728 section 2), so the team's own identity provider leads.
        from .external.issuers import trusted_issuers

        return [*trusted_issuers(), base_url_from_request(request)]

    def get_resource_name(self) -> str:
        return super().get_resource_name() or mcp_settings.SERVER_TITLE or mcp_settings.SERVER_NAME


class McpAuthorizationView(AuthorizationView):
    """
    The consent page: who is asking (the client's name and where it will send the user back),
    and, in plain words, what it will be able to do. The template is
    ``django_mcp/oauth/authorize.html``; a project's own ``templates/`` overrides it. Login is the
    project's (``LOGIN_URL``), so its accounts, SSO and two-factor rules apply.
    """

    template_name = "django_mcp/oauth/authorize.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        redirect_uri = kwargs.get("redirect_uri") or context.get("redirect_uri") or ""
        context["redirect_host"] = urlsplit(redirect_uri).hostname or ""
        context["server_name"] = mcp_settings.SERVER_TITLE or mcp_settings.SERVER_NAME
        context["server_icon"] = consent_icon()
        return context


def consent_icon() -> str | None:
    """The ``src`` of the server icon for the consent page (a light page): a light or theme-less one first."""
    icons = valid_icons(mcp_settings.SERVER_ICONS)
    for icon in sorted(icons, key=lambda icon: icon.get("theme") == "dark"):
        return icon["src"]
    return None


#: Grant types a registering MCP client may list; the others are dropped rather than refused.
USABLE_GRANT_TYPES = ("authorization_code", "refresh_token")


@method_decorator(csrf_exempt, name="dispatch")
@method_decorator(login_not_required, name="dispatch")
class McpClientRegistrationView(DynamicClientRegistrationView):
    """
    RFC 7591 registration, forgiving what real MCP clients send: extra grant types
    (``device_code``, ``client_credentials``) beside ``authorization_code`` are dropped, since
    django-oauth-toolkit keeps one grant type per client and refuses the request otherwise. Who
    may register is DOT's ``DCR_REGISTRATION_PERMISSION_CLASSES`` (see
    :mod:`django_mcp.oauth.registration`).
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            metadata = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            metadata = None
        refusal = self.redirect_refusal(request)
        if refusal:
            return JsonResponse({"error": "invalid_redirect_uri", "error_description": refusal}, status=400)
        if isinstance(metadata, dict):
            grant_types = metadata.get("grant_types")
            if isinstance(grant_types, list) and "authorization_code" in grant_types:
                metadata["grant_types"] = [grant for grant in grant_types if grant in USABLE_GRANT_TYPES]
                request._body = json.dumps(metadata).encode()
        return super().post(request, *args, **kwargs)

    def redirect_refusal(self, request: HttpRequest) -> str | None:
        """
        Why a registration policy refuses the redirect URIs, answered as RFC 7591's
        ``invalid_redirect_uri`` (400) rather than DOT's generic 401.
        """
        from oauth2_provider.settings import oauth2_settings

        from .registration import redirect_uris_of

        uris = redirect_uris_of(request)
        for policy_class in oauth2_settings.DCR_REGISTRATION_PERMISSION_CLASSES:
            policy = policy_class()
            check = getattr(policy, "redirect_allowed", None)
            if check is None or uris is None:
                continue
            for uri in uris:
                if not isinstance(uri, str) or not check(urlsplit(uri)):
                    return (f"The redirect URI {uri!r} is not allowed: use a loopback address (any port) or an "
                            "allowed HTTPS address")
        return None


def legacy_authorize_redirect(request: HttpRequest) -> HttpResponse:
    """
    ``/authorize``, the 2025-03-26 default for servers without metadata (MCP spec 2025-03-26,
    basic/authorization, "Fallbacks for Servers without Metadata Discovery"): on to the real one.
    """
    from django.http import HttpResponseRedirect

    target = reverse("oauth2_provider:authorize")
    query = request.META.get("QUERY_STRING", "")
    return HttpResponseRedirect(f"{target}?{query}" if query else target)
