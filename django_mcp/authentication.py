"""
Authentication classes: who is asking, decided once per request by every transport.

Shaped like DRF's ``rest_framework.authentication``. Each class looks at the incoming request
(:class:`IncomingRequest`: the ASGI scope and headers over HTTP, the configured user over stdio)
and returns ``(user, auth)`` when it recognises a credential, ``None`` when it sees none, or
raises :class:`AuthenticationFailed` when a credential is present but wrong. The first class that
returns a pair wins; when none does, the request runs as ``AnonymousUser`` with ``auth=None``.

The classes come from ``DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]`` and can be set per
endpoint (``McpHttpConsumer.as_asgi(authentication_classes=[...])``). A static API key, as an
example of the seam::

    class ApiKeyAuthentication(BaseAuthentication):
        async def authenticate(self, request):
            key = request.headers.get("x-api-key")
            if key is None:
                return None
            user = await User.objects.filter(api_key=key, is_active=True).afirst()
            if user is None:
                raise AuthenticationFailed("Unknown API key")
            return user, key

        def authenticate_header(self, request):
            return 'ApiKey realm="mcp"'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .conf import mcp_settings
from .protocol.errors import McpError


class AuthenticationFailed(McpError):
    """A credential was presented and is not valid: HTTP 401 (an error response over stdio)."""

    code = -32600
    default_message = "Authentication failed"
    #: The authentication class that refused the credential (set by :func:`authenticate`).
    authenticator: "BaseAuthentication | None" = None


class NotAuthenticated(AuthenticationFailed):
    """No credential, where ``DJANGO_MCP["REQUIRE_AUTHENTICATION"]`` asks for one: HTTP 401."""

    default_message = "Authentication required"


class IncomingRequest:
    """
    What an authentication class may look at. ``headers`` has lower-case names (the last value
    of a repeated header); ``scope`` is the ASGI scope (empty over stdio); ``process_user`` is
    the user a stdio server was started for (``--user``), None over HTTP. ``challenge_params``
    are what a class should add to its ``WWW-Authenticate`` challenge (an RFC 6750 ``error``, the
    ``scope`` a refused call needed); a class that refuses a credential may set them too.
    """

    __slots__ = ("transport", "scope", "process_user", "_raw_headers", "_headers", "challenge_params")

    def __init__(self, transport: str, headers: dict[str, str] | None = None, scope: dict[str, Any] | None = None,
                 process_user: Any = None, *, raw_headers: dict[bytes, str] | None = None) -> None:
        self.transport = transport
        self.scope = scope if scope is not None else {}
        self.process_user = process_user
        self._headers = headers
        self._raw_headers = raw_headers
        self.challenge_params: dict[str, str] = {}

    @property
    def headers(self) -> Mapping[str, str]:
        # A view of the consumer's headers: most classes look up one or two names, so none is
        # decoded until asked for.
        if self._headers is None:
            self._headers = HeaderView(self._raw_headers or {})
        return self._headers


class HeaderView(Mapping[str, str]):
    """Read-only ``str``-keyed access to headers kept by their ``bytes`` names (lower-case)."""

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[bytes, str]) -> None:
        self._raw = raw

    def __getitem__(self, name: str) -> str:
        return self._raw[name.encode("latin-1")]

    def get(self, name: str, default: Any = None) -> Any:  # without Mapping's try/except KeyError
        try:
            key = name.encode("latin-1")
        except (AttributeError, UnicodeEncodeError):
            return default
        return self._raw.get(key, default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (name.decode("latin-1") for name in self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return repr(dict(self))


class BaseAuthentication:
    """Override :meth:`authenticate`; override :meth:`authenticate_header` to name the scheme in 401s."""

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        """``(user, auth)`` for a recognised credential, None for no credential."""
        raise NotImplementedError(".authenticate() must be overridden.")

    def authenticate_header(self, request: IncomingRequest) -> str | None:
        """The ``WWW-Authenticate`` value sent with a 401, or None."""
        return None


class SessionAuthentication(BaseAuthentication):
    """
    Django's login session, as Channels' ``AuthMiddlewareStack`` puts it in ``scope["user"]``: wrap
    the MCP endpoint in the stack to let browser-logged-in users through.
    """

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        user = request.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        return user, None


class ProcessUserAuthentication(BaseAuthentication):
    """The user a stdio server runs as (``manage.py mcp_stdio --user`` or ``$DJANGO_MCP_USER``)."""

    async def authenticate(self, request: IncomingRequest) -> tuple[Any, Any] | None:
        user = request.process_user
        if user is None or not user.is_authenticated:
            return None
        return user, None


_instances: dict[int, tuple[Any, list[BaseAuthentication]]] = {}


def get_authenticators(classes: Iterable[Any] | None) -> list[BaseAuthentication]:
    """
    Instances of ``classes`` (classes or instances); None means the setting's list. Made once per
    list and shared by every request, like a site's primitives: keep request state off ``self``.
    """
    if classes is None:
        classes = mcp_settings.DEFAULT_AUTHENTICATION_CLASSES  # a new list after a settings reload
    cached = _instances.get(id(classes))
    if cached is None or cached[0] is not classes:
        cached = _instances[id(classes)] = (classes, [cls() if isinstance(cls, type) else cls for cls in classes])
    return cached[1]


_anonymous: Any = None


def anonymous_user() -> Any:
    """The shared ``AnonymousUser``: it holds no state, so one serves every request."""
    global _anonymous
    if _anonymous is None:
        from django.contrib.auth.models import AnonymousUser

        _anonymous = AnonymousUser()
    return _anonymous


#: The ASGI scope key under which the test client (:meth:`django_mcp.test.McpClient.force_authenticate`)
#: puts the ``(user, auth)`` a request runs as, skipping the authentication classes as DRF's
#: ``force_authenticate`` does. Only code in the process can set a scope key: no client can.
FORCED_AUTHENTICATION = "django_mcp.forced_authentication"


async def authenticate(authenticators: Iterable[BaseAuthentication], request: IncomingRequest) -> tuple[Any, Any]:
    """
    Run the authenticators in order; ``(AnonymousUser, None)`` when none recognises a credential.
    An :class:`AuthenticationFailed` leaves with ``authenticator`` set to the class that raised it.
    A request the test client forced an identity on runs as that identity.
    """
    forced = request.scope.get(FORCED_AUTHENTICATION)
    if forced is not None:
        return forced
    for authenticator in authenticators:
        try:
            found = await authenticator.authenticate(request)
        except AuthenticationFailed as exc:
            exc.authenticator = authenticator
            raise
        if found is not None:
            return found
    return anonymous_user(), None


def challenge(authenticators: Iterable[BaseAuthentication], request: IncomingRequest,
              failure: AuthenticationFailed | None = None) -> str | None:
    """
    The ``WWW-Authenticate`` value of a 401: the scheme of the class that refused the credential,
    else of the first class that names one (DRF takes the first class's; here a session class
    first in the list would leave bearer and key schemes without a challenge).
    """
    refused_by = getattr(failure, "authenticator", None)
    header = refused_by.authenticate_header(request) if refused_by is not None else None
    if header:
        return header
    for authenticator in authenticators:
        header = authenticator.authenticate_header(request)
        if header:
            return header
    return None


__all__ = ["FORCED_AUTHENTICATION", "AuthenticationFailed", "BaseAuthentication", "IncomingRequest",
           "NotAuthenticated", "ProcessUserAuthentication", "SessionAuthentication", "authenticate", "challenge",
           "get_authenticators"]
