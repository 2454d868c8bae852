"""
The view that serves a site's Server Card, as the draft of SEP-2127 asks a host to
(experimental-ext-server-card ``docs/discovery.md`` at commit ``8924e086``): its media type,
``Access-Control-Allow-Origin: *`` and a preflight answer ("CORS Requirements"), ``Cache-Control:
public, max-age=3600`` and an ``ETag`` honoured with ``304 Not Modified`` ("Caching")::

    # mysite/urls.py (excerpt)
    from django.urls import include, path

    urlpatterns = [
        ...,
        path("", include("django_mcp.server_card.urls")),   # GET /mcp/server-card
    ]
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.views import View

from ..conf import mcp_settings
from ..transports.cors import header_names
from .card import MEDIA_TYPE, ServerCard, public_base_url


#: What a client may ask for, in our order of preference: the card's own type (docs/discovery.md,
#: "Hosted Server Card Location": the server echoes the negotiated type), or plain JSON.
OFFERED_TYPES = (MEDIA_TYPE, "application/json")
#: The request headers the draft names for a card fetch ("CORS Requirements").
CORS_REQUEST_HEADERS = ("Content-Type", "If-None-Match")


class ServerCardView(View):
    """
    ``GET``, ``HEAD`` and ``OPTIONS`` of a site's Server Card
    (:class:`~django_mcp.server_card.card.ServerCard`), the same for every client: anonymous, with
    no session, cookie or credential read.

    ``as_view()`` takes the class attributes: ``site`` (default ``DJANGO_MCP["SITE"]``),
    ``endpoint`` (the path of the site's Streamable HTTP endpoint, default
    ``DJANGO_MCP["MCP_PATH"]``), ``card_class`` (a :class:`ServerCard` subclass that sets the name,
    repository, headers or ``_meta``) and ``max_age`` (seconds clients and shared caches may keep
    the card, 3600 as the draft suggests).
    """

    http_method_names = ["get", "head", "options"]
    card_class: type[ServerCard] = ServerCard
    site: Any = None
    endpoint: str | None = None
    max_age = 3600

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        view = super().as_view(**initkwargs)
        # A public document (the draft: "publicly accessible by design"): Django's
        # LoginRequiredMiddleware must let anonymous clients read it, as login_not_required would.
        view.login_required = False
        return view

    def get_card(self) -> dict[str, Any]:
        """The card, for the public base URL (``PUBLIC_BASE_URL``, else this request's)."""
        base = public_base_url(self.request)
        return self.card_class(site=self.site, endpoint=self.endpoint).as_dict(base or "")

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        media_type = next((offered for offered in OFFERED_TYPES if request.accepts(offered)), None)
        if media_type is None:
            refused = HttpResponse(f"Acceptable: {', '.join(OFFERED_TYPES)}.\n", status=406,
                                   content_type="text/plain; charset=utf-8")
            patch_vary_headers(refused, ["Accept"])
            return self.with_cors(refused)
        body = json.dumps(self.get_card(), ensure_ascii=False, separators=(",", ":")).encode()
        response = HttpResponse(body, content_type=media_type)
        # Strong and cheap: a digest of the exact bytes (and of the type, which changes the representation).
        response["ETag"] = '"' + hashlib.sha256(media_type.encode() + b"\n" + body).hexdigest()[:32] + '"'
        response["Cache-Control"] = f"public, max-age={int(self.max_age)}"
        patch_vary_headers(response, ["Accept"])
        # If-None-Match naming this ETag: 304 with the validators and Cache-Control (RFC 9110, 13.1.2).
        return self.with_cors(get_conditional_response(request, etag=response["ETag"], response=response))

    def head(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # The GET answer's headers, with its length, without its body (RFC 9110, 9.3.2): not every
        # ASGI or WSGI server drops a HEAD response's body on its own.
        response = self.get(request, *args, **kwargs)
        if isinstance(response, HttpResponse) and response.status_code == 200:
            length = len(response.content)
            response.content = b""
            response["Content-Length"] = str(length)
        return response

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        """A CORS preflight answer (any origin may read the card), or the methods allowed."""
        response = HttpResponse(status=204)
        response["Allow"] = "GET, HEAD, OPTIONS"
        if "Access-Control-Request-Method" in request.headers:
            response["Access-Control-Allow-Methods"] = "GET, HEAD"
            # The draft's two, and whatever else the page asks to send: the card is public and read-only.
            requested = header_names(request.headers.get("Access-Control-Request-Headers"))
            names = list(CORS_REQUEST_HEADERS)
            names += [name for name in requested if name not in {known.lower() for known in names}]
            response["Access-Control-Allow-Headers"] = ", ".join(names)
            if mcp_settings.CORS_MAX_AGE is not None:
                response["Access-Control-Max-Age"] = str(int(mcp_settings.CORS_MAX_AGE))
            patch_vary_headers(response, ["Access-Control-Request-Headers"])
        return self.with_cors(response)

    @staticmethod
    def with_cors(response: HttpResponseBase) -> HttpResponseBase:
        """``response`` readable from any origin, its ``ETag`` too (the draft's "CORS Requirements")."""
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Expose-Headers"] = "ETag"
        return response
