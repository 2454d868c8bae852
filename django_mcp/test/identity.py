"""
Who the test client's requests run as: a forced identity (DRF's ``force_authenticate``), a Django
login session (``login``), or credentials sent as headers (``credentials``), as a real client's are.
"""

from __future__ import annotations

from typing import Any

from .transport import HttpTransport


class ForcedCredential:
    """
    The credential a forced identity carries: the scopes the test gave, read by permission classes
    such as :class:`~django_mcp.permissions.HasScopes` the way they read an OAuth token's.

    ``scopes`` is a space-separated string of scope names, as an OAuth token's ``scope`` is, or an
    iterable of names; the credential keeps them as the frozenset ``scopes``.
    """

    def __init__(self, scopes: Any) -> None:
        self.scopes = frozenset(scopes.split() if isinstance(scopes, str) else scopes)

    def __repr__(self) -> str:
        return f"<ForcedCredential scopes={sorted(self.scopes)}>"


class Identity:
    """
    The identity methods of :class:`~django_mcp.test.McpClient`. A legacy session belongs to the
    user who opened it, so a client whose identity changes opens a new session with its next
    request (the old one is left to expire, as a client that went away leaves it).
    """

    transport: HttpTransport
    session_id: str | None
    server: dict[str, Any] | None

    def _identity_changed(self) -> None:
        if self.session_id is not None:
            self.session_id, self.server = None, None

    def force_authenticate(self, user: Any = None, token: Any = None, *, scopes: Any = None) -> None:
        """
        Run every request as ``user``, skipping the authentication classes (as DRF's
        ``APIClient.force_authenticate``); permissions, hooks and the tool admin still apply.
        ``token`` is the credential the request carries (``ctx.auth``: a DOT access token, say);
        ``scopes`` (names, or a space-separated string) grant scopes without one. ``None`` for
        everything ends it.
        """
        self._identity_changed()
        if user is None and token is None:
            self.transport.forced = None
            return
        if user is None:
            from ..authentication import anonymous_user

            user = anonymous_user()
        auth = token if token is not None else (ForcedCredential(scopes) if scopes is not None else None)
        self.transport.forced = (user, auth)

    def credentials(self, headers: dict[str, str] | None = None, **meta: str) -> None:
        """
        Send these headers with every request from now on, replacing earlier ones: a dict of
        header names (``{"Authorization": "Bearer ..."}``) or Django's ``HTTP_*`` keywords
        (``HTTP_AUTHORIZATION="Bearer ..."``), as DRF's ``APIClient.credentials``. No argument
        clears them.
        """
        self._identity_changed()
        found = {name.lower(): value for name, value in (headers or {}).items()}
        for key, value in meta.items():
            if not key.startswith("HTTP_"):
                raise TypeError(f"credentials() takes HTTP_* keywords, as DRF's does, not {key!r}")
            found[key[5:].replace("_", "-").lower()] = value
        self.transport.headers = found

    def login(self, **credentials: Any) -> bool:
        """
        Log in through Django's authentication backends and session, as ``django.test.Client.login``
        does; the session cookie goes with every request. The MCP endpoint sees the user when the
        project wraps it in Channels' ``AuthMiddlewareStack`` (``SessionAuthentication``), as a
        browser's requests would. True when the credentials were accepted.
        """
        from django.test import Client

        client = Client()
        if not client.login(**credentials):
            return False
        self._identity_changed()
        self.transport.cookies = client.cookies
        return True

    def force_login(self, user: Any, backend: str | None = None) -> None:
        """Log ``user`` in without credentials (``django.test.Client.force_login``); see :meth:`login`."""
        from django.test import Client

        client = Client()
        client.force_login(user, backend)
        self._identity_changed()
        self.transport.cookies = client.cookies

    async def alogin(self, **credentials: Any) -> bool:
        from django.test import AsyncClient

        client = AsyncClient()
        if not await client.alogin(**credentials):
            return False
        self._identity_changed()
        self.transport.cookies = client.cookies
        return True

    async def aforce_login(self, user: Any, backend: str | None = None) -> None:
        from django.test import AsyncClient

        client = AsyncClient()
        await client.aforce_login(user, backend)
        self._identity_changed()
        self.transport.cookies = client.cookies

    def logout(self) -> None:
        """Forget every identity: forced, logged in, and credentials."""
        self._identity_changed()
        self.transport.forced = None
        self.transport.headers = {}
        self.transport.cookies = type(self.transport.cookies)()

    async def alogout(self) -> None:
        self.logout()


__all__ = ["ForcedCredential", "Identity"]
