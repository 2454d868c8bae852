"""
DRF credentials for MCP: the project's Django REST framework authentication classes, run for
every MCP request, so a user of the API calls tools with the token the API already gave them::

    DJANGO_MCP = {
        "DEFAULT_AUTHENTICATION_CLASSES": [
            "django_mcp.drf.DRFAuthentication",          # REST_FRAMEWORK's classes, in their order
            "django_mcp.authentication.ProcessUserAuthentication",
        ],
    }

Any class DRF accepts works — ``TokenAuthentication``, SimpleJWT's ``JWTAuthentication``, Knox,
``BasicAuthentication``, a project's own — because DRF runs it: the request is a real
:class:`rest_framework.request.Request` over a Django request made from the ASGI scope (its
headers, cookies, client address; no body, which no authentication class reads). They run on the
thread pool, as their database queries must; the event loop does not wait on them.

What each outcome becomes:

- a class returns ``(user, auth)``: the MCP request runs as that user with that ``auth`` (a
  ``Token``, a validated JWT…), which tools, permissions and the call log see;
- a class raises DRF's ``AuthenticationFailed`` (or any ``APIException``): HTTP 401 with its
  message, and the ``WWW-Authenticate`` challenge DRF would send (the first class's header);
- no class recognises a credential: the next MCP authentication class is asked, as for any class.

DRF's ``SessionAuthentication`` finds nobody here (there is no ``AuthenticationMiddleware`` on the
MCP endpoint); django_mcp's own :class:`~django_mcp.authentication.SessionAuthentication` serves
browser sessions.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.utils.module_loading import import_string

from ..authentication import AuthenticationFailed, BaseAuthentication, IncomingRequest
from ..threads import in_thread


class DRFAuthentication(BaseAuthentication):
    """
    MCP authentication by a project's DRF authentication classes: ``authentication_classes``
    (classes or dotted paths), by default ``REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]``;
    ``credential_headers``, the headers a credential comes in (default ``Authorization``; None:
    every request goes to the classes). Both may be given here or set on a subclass, as a DRF
    view names its classes::

        class ApiTokens(DRFAuthentication):
            authentication_classes = [TokenAuthentication, JWTAuthentication]
    """

    #: DRF authentication classes (or dotted paths) to run; None: ``REST_FRAMEWORK``'s defaults.
    authentication_classes: Sequence[Any] | None = None
    #: The headers a credential comes in: a request with none of them is passed on at once,
    #: without a trip to the thread pool. DRF's token, JWT, Knox and Basic classes all read
    #: ``Authorization``; name the others a project's classes read (a cookie: ``"cookie"``), or
    #: None to run the classes for every request.
    credential_headers: Sequence[str] | None = ("authorization",)

    def __init__(self, authentication_classes: Sequence[Any] | None = None, *,
                 credential_headers: Any = ...) -> None:
        if authentication_classes is not None:
            self.authentication_classes = authentication_classes
        if credential_headers is not ...:
            self.credential_headers = credential_headers
        self._authenticators: list[Any] | None = None

    def get_authenticators(self) -> list[Any]:
        """Instances of the DRF classes, made once (DRF's classes keep no request state)."""
        if self._authenticators is None:
            classes = self.authentication_classes
            if classes is None:
                from rest_framework.settings import api_settings

                classes = api_settings.DEFAULT_AUTHENTICATION_CLASSES
            loaded = [import_string(cls) if isinstance(cls, str) else cls for cls in classes]
            self._authenticators = [cls() if isinstance(cls, type) else cls for cls in loaded]
        return self._authenticators

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        if request.scope.get("type") != "http":
            return None  # stdio and anything else without an HTTP request to show DRF
        if self.credential_headers is not None and not any(request.headers.get(name)
                                                           for name in self.credential_headers):
            return None
        outcome = await _authenticate_in_thread(self.get_authenticators(), request.scope)
        if isinstance(outcome, str):
            raise AuthenticationFailed(outcome)
        return outcome

    def authenticate_header(self, request: IncomingRequest) -> str | None:
        # As DRF's APIView.get_authenticate_header: the first class's scheme. A class that names
        # none (SessionAuthentication) is passed over, so a bearer class after it still challenges.
        if request.scope.get("type") != "http":
            return None
        authenticators = self.get_authenticators()
        drf_request = _drf_request(authenticators, request.scope)  # built on a 401 only
        for authenticator in authenticators:
            header = authenticator.authenticate_header(drf_request)
            if header:
                return header
        return None


def _drf_request(authenticators: list[Any], scope: dict[str, Any]) -> Any:
    """A DRF request over a Django request made from ``scope``, without a body."""
    from rest_framework.request import Request

    return Request(ASGIRequest(scope, io.BytesIO()), authenticators=authenticators)


@in_thread
def _authenticate_in_thread(authenticators: list[Any], scope: dict[str, Any]) -> tuple[Any, Any] | str | None:
    """
    ``(user, auth)``, None when no class recognised a credential, or the message of the
    ``APIException`` a class raised (returned, not raised, so no DRF exception crosses threads).
    """
    from rest_framework.exceptions import APIException

    drf_request = _drf_request(authenticators, scope)
    try:
        user = drf_request.user  # runs the classes in order (Request._authenticate)
    except APIException as exc:
        return str(exc.detail)
    if drf_request.successful_authenticator is None:
        return None
    return user, drf_request.auth


__all__ = ["DRFAuthentication"]
