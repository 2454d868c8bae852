"""
The channel-layer fan-out: server→client pushes across workers, over the Channels channel layer.

Group names (the channel layer allows ASCII letters, digits, ``-``, ``_`` and ``.``):

- :data:`BROADCAST_GROUP`: list-changed notifications, for every open stream on every worker;
- :func:`resource_group`: ``notifications/resources/updated`` for one URI;
- :func:`session_group`: messages for one legacy session — answers to the server's requests,
  cancellations, subscription changes, the end of the session.

A worker joins each group once, with one channel, for all its streams (``transports/shared_groups.py``),
so every event names the group it is for (``"group"``): :func:`publish` adds it, and so does
:func:`send_to_channel` for a message sent straight to the worker that holds a stream.

A process also keeps the futures of its own outstanding server→client requests and its in-flight
request tasks here, so that a message reaching the right worker directly needs no round trip.
"""

import asyncio
import functools
import hashlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer, get_channel_layer

from .hooks import Publication, global_chains
from .signals import channel_layer_failed, tell


logger = logging.getLogger("django_mcp.fanout")


BROADCAST_GROUP = "mcp.broadcast"
_RESOURCE_PREFIX = "mcp.resource."

# Channel-layer event types. Channels routes an event to the consumer method named after its type
# with dots as underscores ("mcp.notify" → mcp_notify).
#: A change notification: ``kind`` is tools / prompts / resources (list changed) or resource (``uri``).
NOTIFY = "mcp.notify"
#: A legacy client's answer to a server→client request, for the worker waiting on it.
CLIENT_RESPONSE = "mcp.client_response"
#: ``notifications/cancelled`` for a request running on another worker.
CANCEL = "mcp.cancel"
#: A session subscribed to (or unsubscribed from) a resource: its GET stream joins (or leaves) it.
SUBSCRIBE = "mcp.subscribe"
#: The session ended (DELETE, expiry, its HTTP+SSE stream closed).
SESSION_CLOSED = "mcp.session_closed"
#: A message for an HTTP+SSE session's stream, from the worker that served the POST.
SSE_SEND = "mcp.sse_send"
#: An event of a resumable POST stream, for a client resuming it with Last-Event-ID.
STREAM_EVENT = "mcp.stream_event"
#: A resumer asking whether a stream's request still runs (``reply_to``: its channel).
STREAM_PROBE = "mcp.stream_probe"
#: The owner's answer to a probe, with the last sequence it emitted.
STREAM_ALIVE = "mcp.stream_alive"
#: A session changed or ended: every worker drops its cached copy (transports/session_cache.py).
SESSION_CHANGED = "mcp.session_changed"
#: Rows staff edit (tool rows, query tools…) changed: every worker reads them again (snapshots.py).
#: The value keeps its first name, so workers of the previous release understand it.
ROWS_CHANGED = POLICIES_CHANGED = "mcp.policies_changed"

#: A user's credential ended (revoked, the user deactivated): that user's streams check theirs now.
CREDENTIALS_CHANGED = "mcp.credentials_changed"

#: Every worker's session cache listens here (and hears row changes too).
SESSIONS_GROUP = "mcp.sessions"

EVENT_TYPES = frozenset({NOTIFY, CLIENT_RESPONSE, CANCEL, SUBSCRIBE, SESSION_CLOSED, SSE_SEND, STREAM_EVENT,
                         STREAM_PROBE, STREAM_ALIVE, SESSION_CHANGED, ROWS_CHANGED, CREDENTIALS_CHANGED})

# (session id, request id) → future of a server→client request awaiting the client's answer.
pending_client_requests: dict[tuple[str, Any], asyncio.Future[dict[str, Any]]] = {}
# (session id, request id) → task serving a client request, for notifications/cancelled.
in_flight: dict[tuple[str, Any], asyncio.Task[Any]] = {}


def reaches_other_workers(layer: Any) -> bool:
    """
    Whether ``layer`` connects this process to others. With none, or the in-process layer, this
    worker is the only one it can tell anything: what it forgets itself is all there is to forget
    (a cold session's DELETE need not wake the announcement listener to forget it a second time).
    """
    return layer is not None and not isinstance(layer, InMemoryChannelLayer)


_unconnected_workers = False


def expect_unconnected_workers() -> None:
    """
    Say that other processes may serve this site with no channel layer between them and this one:
    the plain Django view (:mod:`django_mcp.views`) says so, since a WSGI or ASGI server runs it
    in as many processes as it is told to, whatever ``CHANNEL_LAYERS`` holds. Sessions are then
    never taken to be this worker's alone, and none is cached in memory, since no other worker
    could say when it changed.
    """
    global _unconnected_workers
    _unconnected_workers = True


def alone(layer: Any) -> bool:
    """
    Whether this process is the only one serving the site: no channel layer joins it to others
    and none is expected (:func:`expect_unconnected_workers`). Then every session there is was
    opened here.
    """
    return not reaches_other_workers(layer) and not _unconnected_workers


def session_group(session_id: str) -> str:
    return f"mcp.session.{session_id}"


def resource_group(uri: str) -> str:
    # Hashed: a URI may hold characters (and lengths) that group names may not.
    return f"{_RESOURCE_PREFIX}{hashlib.sha256(uri.encode()).hexdigest()[:48]}"


def stream_group(stream_id: str) -> str:
    return f"mcp.stream.{stream_id}"


def key(request_id: Any) -> Any:
    """Request ids compare by JSON value: ``1`` and ``"1"`` are different ids."""
    return (type(request_id).__name__, request_id)


# How many channel-layer operations a worker runs at once. channels_redis takes a connection from
# its pool (redis-py's default: 100) for each; when hundreds of streams close together, unbounded
# group_discard calls exhausted the pool ("Too many connections") and left dead channels in groups.
LAYER_CONCURRENCY = 32
LAYER_ATTEMPTS = 3
_limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


async def layer_call(operation: Callable[..., Awaitable[Any]], *args: Any, name: str | None = None) -> Any:
    """
    Run a channel-layer operation (``group_add``, ``group_discard``, ``group_send``…) within the
    worker's concurrency limit, retrying a failure twice after a short pause: a burst waits its
    turn instead of failing, and a transient error does not leave a channel in a group for good.
    ``name`` is what observers are told failed (default: the operation's own name).
    """
    loop = asyncio.get_running_loop()
    limit = _limits.get(loop)
    if limit is None:
        limit = _limits[loop] = asyncio.Semaphore(LAYER_CONCURRENCY)
    for attempt in range(LAYER_ATTEMPTS):
        async with limit:
            try:
                return await operation(*args)
            except ChannelFull:
                raise  # not a transient fault: the caller decides whether to wait (send_to_channel)
            except Exception as exc:
                if attempt == LAYER_ATTEMPTS - 1:
                    layer_failed(name or getattr(operation, "__name__", "call"), exc)
                    raise
        await asyncio.sleep(0.05 * (attempt + 1))


def layer_failed(operation: str, exc: BaseException) -> None:
    """Tell observers (:data:`~django_mcp.signals.channel_layer_failed`) that a layer operation gave up."""
    tell(channel_layer_failed, operation=operation, exception=exc)


async def send_to_channel(channel: str, group: str, event: dict[str, Any], *, patience: float = 30.0) -> bool:
    """
    Send ``event`` to one worker's channel, for its streams in ``group``, waiting while the channel
    is full (its reader is behind) for up to ``patience`` seconds: backpressure instead of the
    silent drop a full channel gets from a group send. False when there is no channel layer or the
    channel stayed full.
    """
    layer = get_channel_layer()
    if layer is None:
        return False
    event = {**event, "group": group}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    pause = 0.005
    while True:
        try:
            await layer_call(layer.send, channel, event)
            return True
        except ChannelFull:
            if loop.time() >= deadline:
                logger.warning("Channel %s stayed full for %.0f s; a message for it was dropped", channel, patience)
                return False
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.25)


async def publish(group: str, event: dict[str, Any]) -> None:
    """
    Send ``event`` to a group if a channel layer is configured. The event names the group: a
    worker's one channel is in many, and hands the event to its streams in this one.
    """
    layer = get_channel_layer()
    if layer is not None and not nobody_joined(layer, group):
        event = {**event, "group": group}
        if event.get("type") == NOTIFY:
            chains = global_chains()
            if chains.around("publish"):
                # A change notification for clients: the hooks around publishing may add to its _meta.
                await chains.run(Publication(group, event, functools.partial(layer_call, layer.group_send)))
                return
        await layer_call(layer.group_send, group, event)


def nobody_joined(layer: Any, group: str) -> bool:
    """
    Whether ``layer`` is the in-process one and no channel is in ``group``: a send would reach no
    one, and would still sweep every expired channel and group of the process first (as
    ``InMemoryChannelLayer.group_send`` does). The DELETE of a session nobody streams, say.
    """
    return isinstance(layer, InMemoryChannelLayer) and not getattr(layer, "groups", {group: True}).get(group)


async def publish_to_session(session_id: str, event: dict[str, Any]) -> None:
    await publish(session_group(session_id), event)


async def deliver_client_response(session_id: str, message: dict[str, Any]) -> None:
    """Hand a legacy client's answer to the server request waiting for it, wherever that is."""
    future = pending_client_requests.get((session_id, key(message.get("id"))))
    if future is not None:
        if not future.done():
            future.set_result(message)
        return
    await publish_to_session(session_id, {"type": CLIENT_RESPONSE, "message": message})


async def cancel_request(session_id: str, request_id: Any) -> None:
    """Cancel a legacy request in flight on this worker or on another (MCP spec 2026-07-28, basic/patterns/cancellation)."""
    task = in_flight.get((session_id, key(request_id)))
    if task is not None:
        task.cancel()
        return
    await publish_to_session(session_id, {"type": CANCEL, "request_id": request_id})


def cancel_session_requests(session_id: str) -> None:
    """Cancel this worker's requests of a session that has ended."""
    for (owner, _), task in list(in_flight.items()):
        if owner == session_id:
            task.cancel()


async def announce_session_end(session_id: str) -> None:
    """A session is gone: cancel its requests here, and end its streams and requests everywhere."""
    cancel_session_requests(session_id)
    await publish_to_session(session_id, {"type": SESSION_CLOSED})
