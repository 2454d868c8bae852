"""
Django requests made for a tool call: what a DRF view published as a tool is dispatched with
(drf_views.py), and the ``request`` in the context of a tool's serializers (django_inputs.py).

They are :class:`~django.core.handlers.asgi.ASGIRequest` objects, built from an ASGI scope the way
Django builds the requests it serves, so ``request.GET``, ``request.body``, ``build_absolute_uri()``
and DRF's parsers work as usual. Each carries the tool call's :class:`~django_mcp.Context` as
``request.mcp_context``; there is no cookie or credential header in them.
"""

from __future__ import annotations

import io
import json
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.handlers.asgi import ASGIRequest

from ..context import Context


#: The attribute of the Django request that holds the tool call's Context.
MCP_CONTEXT = "mcp_context"


def default_host() -> str:
    """
    A host name ``ALLOWED_HOSTS`` accepts, for absolute links (DRF's pagination ``next``…): its
    first name that is no wildcard, else ``localhost`` (which Django accepts in DEBUG by default).
    """
    for host in settings.ALLOWED_HOSTS:
        name = host.lstrip(".")
        if name and "*" not in name:
            return name
    return "localhost"


def query_string(query: dict[str, Any] | None) -> str:
    """Arguments as a query string: lists repeat the key, booleans are ``true``/``false``, None is left out."""
    pairs: list[tuple[str, str]] = []
    for key, value in (query or {}).items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is None:
                continue
            pairs.append((key, ("true" if item else "false") if isinstance(item, bool) else str(item)))
    return urlencode(pairs)


def build_request(ctx: Context, method: str, path: str, query: dict[str, Any] | None = None,
                  body: Any = None, *, host: str | None = None, scheme: str = "https") -> ASGIRequest:
    """A Django request for ``method path?query`` with ``body`` as JSON (None: no body)."""
    host = host or default_host()
    payload = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = [(b"host", host.encode("latin-1")), (b"accept", b"application/json")]
    if body is not None:
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method.upper(),
        "scheme": scheme,
        "path": path,
        "root_path": "",
        "query_string": query_string(query).encode("ascii"),
        "headers": headers,
        "server": (host, 443 if scheme == "https" else 80),
    }
    request = ASGIRequest(scope, io.BytesIO(payload))
    setattr(request, MCP_CONTEXT, ctx)
    return request


__all__ = ["MCP_CONTEXT", "build_request", "default_host", "query_string"]
