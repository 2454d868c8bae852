"""
What a handler may ask of the dispatcher that calls it: the backend, the codec of signed
2026-07-28 request state, and the two ways a result is shaped for the request's revision.

A structural type, so the handlers need not import the dispatcher that imports them:
:class:`~django_mcp.protocol.dispatcher.Dispatcher` is one.
"""

from typing import Any, Protocol

from ..backend import Backend, StateCodec
from ..context import RequestContext


class HandlerHost(Protocol):
    """The dispatcher as its handlers see it."""

    backend: Backend
    state_codec: StateCodec

    def shape_result(self, method: str, result: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """``result`` validated against, and trimmed to, the request revision's schema for ``method``."""
        ...

    def cacheable(self, result: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """``result`` with the 2026-07-28 caching directives (MCP spec 2026-07-28, server/utilities/caching)."""
        ...
