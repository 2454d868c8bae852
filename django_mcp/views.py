"""
The MCP endpoint as a plain Django view, for projects that run without Channels::

    # urls.py
    from django.urls import path
    from django_mcp.views import McpView

    urlpatterns = [
        path("mcp", McpView.as_view()),
        ...
    ]

It serves the same site through the same dispatcher, with the same authentication, permissions,
limits and checks, as the Channels endpoint (:func:`django_mcp.asgi.application`), and both may
serve one site at once: sessions live in the database, so any process serves any request.

What it serves depends on the server that runs it (docs: "Choosing an endpoint"):

- **under WSGI** (gunicorn, uWSGI, ``manage.py runserver``), every POST gets one JSON answer.
  2026-07-28 is served whole except ``subscriptions/listen`` (404, method not found: a WSGI worker
  cannot hold a stream open); 2025-03-26 to 2025-11-25 sessions are served with JSON answers, GET
  gets 405 (MCP spec 2025-11-25, basic/transports#listening-for-messages-from-the-server), and
  progress, log messages and questions to a legacy client (elicitation, sampling, roots) have no
  way to the client, so the capabilities that promise them are not announced. Input from a
  2026-07-28 client travels in multi-round-trip results, which need no stream.
- **under Django's ASGI handler** (uvicorn, hypercorn, granian, daphne without Channels' routing),
  the view holds streams as the Channels endpoint does: SSE answers with progress, ``subscriptions/listen``,
  a session's GET stream.

The 2024-11-05 HTTP+SSE transport is the Channels endpoint's alone.

A WSGI or ASGI server runs the view in as many processes as it is told to, so the view never
takes a session for its process's alone (:func:`django_mcp.fanout.expect_unconnected_workers`):
with channels_redis the processes tell each other what changed, as Channels workers do; without
it each reads sessions from the database, and rows staff edit in the admin reach the other
processes within ``TOOL_POLICY_CACHE_SECONDS``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from django.contrib.auth import aget_user, get_user
from django.db import connections
from django.http import HttpRequest
from django.http.response import HttpResponseBase

from .authentication import SessionAuthentication, get_authenticators
from .fanout import expect_unconnected_workers
from .signals import flush_requested
from .stores.sessions import get_session_store
from .transports.django_exchange import asgi_scope, read_body, serve
from .transports.http import AnswersOnlyMcpConsumer, McpHttpConsumer
from .transports.portal import portal


async def write_what_is_owed() -> None:
    """
    Before the WSGI process's loop stops (at exit): the session rows it owes, and whatever the
    feature apps queued (the call log's entries, through :data:`~django_mcp.signals.flush_requested`).
    """
    await get_session_store().flush()
    if flush_requested.receivers:
        await flush_requested.asend(sender=None)


portal.before_stop.append(write_what_is_owed)


class McpView:
    """
    The MCP endpoint as a Django view. ``McpView.as_view()`` gives the view for a URL pattern;
    keyword arguments override the class attributes, as with Django's class-based views
    (``McpView.as_view(site=my_site)``).

    ``site=``: the :class:`~django_mcp.McpSite` to serve; None means ``DJANGO_MCP["SITE"]``.
    ``authentication_classes=``: the authentication classes; None means
    ``DJANGO_MCP["DEFAULT_AUTHENTICATION_CLASSES"]``. ``consumer_class=``: what serves a request
    under an ASGI server (it may hold streams); ``answers_only_consumer_class=``: what serves one
    under a WSGI server (one answer each).
    """

    site: Any = None
    authentication_classes: Any = None
    consumer_class: type[McpHttpConsumer] = McpHttpConsumer
    answers_only_consumer_class: type[McpHttpConsumer] = AnswersOnlyMcpConsumer

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)

    @classmethod
    def as_view(cls, **initkwargs: Any) -> EndpointView:
        """The view for a URL pattern: a callable that Django runs as a sync or an async view."""
        for key in initkwargs:
            default = getattr(cls, key, cls.as_view)
            if key.startswith("_") or (callable(default) and not isinstance(default, type)):
                # Not an attribute, or a method: as Django's View.as_view() refuses them.
                raise TypeError(f"{cls.__name__}.as_view() got {key!r}: only class attributes such as "
                                "site and authentication_classes may be given")
        return EndpointView(cls, initkwargs)

    def serve_sync(self, request: HttpRequest) -> HttpResponseBase:
        """Serve ``request`` from a thread without an event loop (a WSGI worker's)."""
        expect_unconnected_workers()
        scope = asgi_scope(request)
        body = read_body(request)
        if self.wants_session_user() and hasattr(request, "session"):
            scope["user"] = get_user(request)
        consumer = self.answers_only_consumer_class(site=self.site, authentication_classes=self.authentication_classes)
        return portal.run(serve(consumer, request, scope, body, stream=False))

    async def serve_async(self, request: HttpRequest) -> HttpResponseBase:
        """Serve ``request`` on the running event loop (Django's ASGI handler's)."""
        expect_unconnected_workers()
        scope = asgi_scope(request)
        body = read_body(request)  # already received by Django: read from memory or a spooled file
        if self.wants_session_user() and hasattr(request, "session"):
            scope["user"] = await aget_user(request)
        consumer = self.consumer_class(site=self.site, authentication_classes=self.authentication_classes)
        return await serve(consumer, request, scope, body, stream=True)

    def wants_session_user(self) -> bool:
        """
        Whether an authentication class reads Django's login session (``scope["user"]``, which
        Channels' ``AuthMiddlewareStack`` fills on the Channels endpoint). Only then is the
        session's user looked up, from ``SessionMiddleware``'s session.
        """
        return any(isinstance(authenticator, SessionAuthentication)
                   for authenticator in get_authenticators(self.authentication_classes))


def _coroutine_marks() -> dict[str, Any]:
    """The attribute(s) by which Python's and asgiref's ``iscoroutinefunction`` recognise a marked callable."""
    from asgiref.sync import markcoroutinefunction

    def probe() -> None:
        """Only marked, never called."""

    marked = markcoroutinefunction(probe)
    return {name: getattr(marked, name) for name in ("_is_coroutine_marker", "_is_coroutine") if hasattr(marked, name)}


_MARKS = _coroutine_marks()


class EndpointView:
    """
    What :meth:`McpView.as_view` returns: a view that is asynchronous where an event loop runs it
    and synchronous where none does.

    Django asks whether a view is a coroutine function on every request, from the handler that
    serves it: the ASGI handler asks on its event loop, the WSGI handler on a worker thread
    without one. The answer here follows: under ASGI the view runs on the server's loop, with no
    thread; under WSGI it runs on the worker's thread, which hands the request to the process's
    own loop (:mod:`django_mcp.transports.portal`). A view fixed as async would cost every WSGI
    request a new thread and event loop (asgiref's ``async_to_sync``), one fixed as sync a thread
    per ASGI request — each several times the cost of a small call.

    Made by :meth:`McpView.as_view` from ``view_class`` (the :class:`McpView` subclass) and
    ``initkwargs`` (its keyword arguments), which Django's tools find as ``view_class`` and
    ``view_initkwargs``, as on a class-based view.
    """

    #: MCP requests carry bearer tokens, not the CSRF cookie; the Origin check stands in for
    #: Django's (MCP spec 2025-11-25, basic/transports#security-warning).
    csrf_exempt = True
    #: The endpoint answers an unauthenticated request itself (401 with the OAuth challenge that
    #: lets a client find the authorization server), not with LoginRequiredMiddleware's redirect.
    login_required = False

    def __init__(self, view_class: type[McpView], initkwargs: dict[str, Any]) -> None:
        self.view_class = view_class
        self.view_initkwargs = initkwargs
        self.__doc__ = view_class.__doc__
        self.__module__ = view_class.__module__

    def __call__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        view = self.view_class(**self.view_initkwargs)
        if _running_loop() is not None:
            return view.serve_async(request)
        return view.serve_sync(request)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.view_class.__name__}>"

    @property
    def _non_atomic_requests(self) -> frozenset[str]:
        # ATOMIC_REQUESTS would wrap the call in a transaction on the worker's thread, where none
        # of the endpoint's queries run (they run on the event loop's threads, each tool's in its
        # own), and Django refuses it for an async view. Every database is left out.
        return frozenset(connections)

    @property
    def _is_coroutine_marker(self) -> Any:  # inspect.iscoroutinefunction(), Python 3.12+
        return _MARKS.get("_is_coroutine_marker") if _running_loop() is not None else None

    @property
    def _is_coroutine(self) -> Any:  # asyncio.iscoroutinefunction(), Python 3.11
        return _MARKS.get("_is_coroutine") if _running_loop() is not None else None


_running_loop = asyncio._get_running_loop  # None in a thread without a running loop, and no exception


__all__ = ["EndpointView", "McpView"]
