"""
Serving one request, the way every transport does it.

Each request runs inside its own ``ThreadSensitiveContext``, as Django's ``ASGIHandler`` does for
its views: the sync code it reaches — sync tools, sync permission checks, the ORM through
``database_sync_to_async`` — runs in a thread of its own instead of the one thread every request
of the process would otherwise share, so a slow sync tool no longer holds up everyone else's.
"""

from typing import Any

from asgiref.sync import SyncToAsync, ThreadSensitiveContext

from ..protocol.context import RequestContext
from ..protocol.dispatcher import Dispatcher
from ..request_log import request_done, started
from ..threads import serving_on_callers_connection


async def serve_request(dispatcher: Dispatcher, message: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """
    The dispatcher's answer to one request, its sync work on a thread of its own; the request log
    and the observers of ``request_served`` hear of it (:mod:`django_mcp.request_log`).
    """
    sensitive = enter_thread_sensitive_context()
    since = started()
    response = None
    try:
        response = await dispatcher.handle_request(message, ctx)
        return response
    finally:
        release_handle(ctx)
        if since is not None:
            request_done(dispatcher.backend, message, ctx, response, since)
        if sensitive is not None:
            await leave_thread_sensitive_context(sensitive)


def enter_thread_sensitive_context() -> ThreadSensitiveContext | None:
    """
    What ``async with ThreadSensitiveContext()`` does on entry, without the two coroutines of the
    ``async with`` and the exception its look-up raises when no context is set yet: together a
    twentieth of a small call. None when an outer context is already in force (asgiref lets only
    the outermost one count, and so does this), and under the test client, whose requests' sync
    work shares the test's thread and connection (:func:`django_mcp.threads.on_callers_connection`).
    """
    if SyncToAsync.thread_sensitive_context.get(None) is not None or serving_on_callers_connection():
        return None
    sensitive = ThreadSensitiveContext()
    sensitive.token = SyncToAsync.thread_sensitive_context.set(sensitive)
    return sensitive


async def leave_thread_sensitive_context(sensitive: ThreadSensitiveContext) -> None:
    """
    Leave a context entered by :func:`enter_thread_sensitive_context`. Most requests never made
    a thread of their own (that takes thread-sensitive sync code, such as the async ORM): they
    only reset the variable. One that did leaves through asgiref's own exit, which ends the thread.
    """
    executors = SyncToAsync.context_to_thread_executor
    if executors and sensitive in executors:
        await sensitive.__aexit__(None, None, None)
        return
    token, sensitive.token = sensitive.token, None
    SyncToAsync.thread_sensitive_context.reset(token)


def release_handle(ctx: RequestContext) -> None:
    """
    Drop the request's :class:`~django_mcp.context.Context` once it is answered. The two point at
    each other, a cycle only the garbage collector could free, and the request context holds the
    consumer (its senders are the consumer's methods): every request's objects would wait for a
    collection instead of going at once, and under load the collector would spend more time
    walking them than the request took.
    """
    ctx.handle = None
