"""
Serving one request, the way every transport does it: through the hooks around every request
(:mod:`django_mcp.hooks`) and into the request log; a legacy ``initialize`` (which the transports
answer themselves, as it opens their session) and each notification from the client the same way.

Each request runs inside its own ``ThreadSensitiveContext``, as Django's ``ASGIHandler`` does for
its views: the sync code it reaches — sync tools, sync permission checks, the ORM through
``database_sync_to_async`` — runs in a thread of its own instead of the one thread every request
of the process would otherwise share, so a slow sync tool no longer holds up everyone else's.
"""

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import SyncToAsync, ThreadSensitiveContext

from ..hooks import ClientQuestion, HookChains, McpNotification, McpRequest, chains_of
from ..protocol import jsonrpc
from ..protocol.context import RequestContext, SendRequest
from ..protocol.dispatcher import Dispatcher, MethodCall
from ..protocol.errors import McpError
from ..protocol.versions import LEGACY_VERSIONS, Era
from ..request_log import request_done, started
from ..threads import serving_on_callers_connection


logger = logging.getLogger("django_mcp.protocol")


async def serve_request(dispatcher: Dispatcher, message: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """
    The dispatcher's answer to one request, its sync work on a thread of its own, through the
    hooks around every request (:meth:`django_mcp.hooks.Hook.request`); the request log and the
    observers of ``request_served`` hear of it (:mod:`django_mcp.request_log`).
    """
    sensitive = enter_thread_sensitive_context()
    since = started()
    response = None
    send_request = ctx.send_request
    try:
        chains = chains_of(dispatcher.backend)
        call = through_hooks(chains, dispatcher, message, ctx) if chains is not None and chains.hooks else None
        response = await (dispatcher.handle_request(message, ctx) if call is None
                          else dispatcher.handle_request(message, ctx, call))
        return response
    finally:
        # The sender through the hooks holds the context that holds it: a cycle, undone here.
        ctx.send_request = send_request
        release_handle(ctx)
        if since is not None:
            request_done(dispatcher.backend, message, ctx, response, since)
        if sensitive is not None:
            await leave_thread_sensitive_context(sensitive)


def through_hooks(chains: HookChains, dispatcher: Dispatcher, message: dict[str, Any],
                  ctx: RequestContext) -> MethodCall | None:
    """
    What runs the request's method when hooks are around every request, or None when none is;
    the questions the request asks its client go through the hooks around them
    (:meth:`~django_mcp.hooks.Hook.ask`) too.
    """
    if ctx.send_request is not None and chains.around("ask"):
        ctx.send_request = functools.partial(_ask, chains, dispatcher.backend, ctx, ctx.send_request)
    if not chains.around("request"):
        return None
    run = functools.partial(_dispatch, dispatcher)

    def call(method: str, params: Any, request: RequestContext) -> Awaitable[dict[str, Any]]:
        return chains.run(McpRequest(dispatcher.backend, message, request, run))  # type: ignore[no-any-return]

    return call


def _dispatch(dispatcher: Dispatcher, request: McpRequest) -> Awaitable[dict[str, Any]]:
    return dispatcher.call(request.method, request.params, request.request)


def _ask(chains: HookChains, site: Any, ctx: RequestContext, send: SendRequest, method: str,
         params: dict[str, Any] | None) -> Awaitable[dict[str, Any]]:
    return chains.run(ClientQuestion(site, method, params, ctx, send))  # type: ignore[no-any-return]


def initialize_context(message: dict[str, Any], **transport: Any) -> RequestContext:
    """
    The context of a legacy ``initialize`` before it is answered: the revision the client asked
    for (the negotiation sets the one agreed), the client's own ``clientInfo``, and ``transport``
    (``user``, ``auth``, ``transport``, ``pushes``, ``http_headers``).
    """
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    requested, info = params.get("protocolVersion"), params.get("clientInfo")
    return RequestContext(era=Era.LEGACY, protocol_version=requested if requested in LEGACY_VERSIONS
                          else LEGACY_VERSIONS[-1], client_info=info if isinstance(info, dict) else None,
                          request_id=message.get("id"), method="initialize", params=message.get("params"),
                          **transport)


async def serve_initialize(dispatcher: Dispatcher, message: dict[str, Any], ctx: RequestContext,
                           run: Callable[[McpRequest], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """
    A legacy ``initialize`` (``run`` negotiates and opens the session, and sets ``ctx``'s
    version and session), through the hooks around every request and into the request log like
    any other request; returns the result, raises ``McpError`` as ``run`` does.
    """
    since = started()
    response = None
    request = McpRequest(dispatcher.backend, message, ctx, run)
    try:
        chains = chains_of(dispatcher.backend)
        result = await (chains.run(request) if chains is not None and chains.around("request") else run(request))
        response = jsonrpc.result_response(message["id"], result)
        return result  # type: ignore[no-any-return]
    except McpError as exc:
        response = jsonrpc.error_response(message["id"], dispatcher.error_for_era(exc, ctx))
        raise
    finally:
        release_handle(ctx)
        if since is not None:
            request_done(dispatcher.backend, message, ctx, response, since)


async def serve_notification(dispatcher: Dispatcher, message: dict[str, Any], ctx: RequestContext,
                             run: Callable[[McpNotification], Awaitable[None]] | None = None) -> None:
    """
    A notification from the client, acted on by ``run`` (None: nothing to do but observe it)
    through the hooks around notifications. It has no answer: what fails is logged, never sent.
    """
    chains = chains_of(dispatcher.backend)
    if chains is None or not chains.around("notification"):
        if run is not None:
            await run(McpNotification(dispatcher.backend, message, ctx, run))
        return
    try:
        await chains.run(McpNotification(dispatcher.backend, message, ctx, run or _ignore))
    except McpError as exc:
        logger.info("A hook refused the notification %s: %s", message.get("method"), exc.message)
    except Exception:
        logger.exception("Handling the notification %s failed", message.get("method"))


async def _ignore(notification: McpNotification) -> None:
    return None


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
