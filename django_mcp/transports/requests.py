"""
Serving one request, the way every transport does it.

Each request runs inside its own ``ThreadSensitiveContext``, as Django's ``ASGIHandler`` does for
its views: the sync code it reaches — sync tools, sync permission checks, the ORM through
``database_sync_to_async`` — runs in a thread of its own instead of the one thread every request
of the process would otherwise share, so a slow sync tool no longer holds up everyone else's.
"""

from typing import Any

from asgiref.sync import ThreadSensitiveContext

from ..protocol.context import RequestContext
from ..protocol.dispatcher import Dispatcher


async def serve_request(dispatcher: Dispatcher, message: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """The dispatcher's answer to one request, its sync work on a thread of its own."""
    try:
        async with ThreadSensitiveContext():
            return await dispatcher.handle_request(message, ctx)
    finally:
        release_handle(ctx)


def release_handle(ctx: RequestContext) -> None:
    """
    Drop the request's :class:`~django_mcp.context.Context` once it is answered. The two point at
    each other, a cycle only the garbage collector could free, and the request context holds the
    consumer (its senders are the consumer's methods): every request's objects would wait for a
    collection instead of going at once, and under load the collector would spend more time
    walking them than the request took.
    """
    ctx.handle = None
