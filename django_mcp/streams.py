"""
Server→client pushes across workers, over the Channels channel layer.

Group names (the channel layer allows ASCII letters, digits, ``-``, ``_`` and ``.``):

- :data:`BROADCAST_GROUP`: list-changed notifications, for every open stream on every worker;
- :func:`resource_group`: ``notifications/resources/updated`` for one URI;
- :func:`session_group`: messages for one legacy session — answers to the server's requests,
  cancellations, subscription changes, the end of the session.

A process also keeps the futures of its own outstanding server→client requests and its in-flight
request tasks here, so that a message reaching the right worker directly needs no round trip.
"""

import asyncio
import hashlib
from typing import Any

from channels.layers import get_channel_layer


BROADCAST_GROUP = "mcp.broadcast"

# (session id, request id) → future of a server→client request awaiting the client's answer.
pending_client_requests: dict[tuple[str, Any], asyncio.Future[dict[str, Any]]] = {}
# (session id, request id) → task serving a client request, for notifications/cancelled.
in_flight: dict[tuple[str, Any], asyncio.Task[Any]] = {}


def session_group(session_id: str) -> str:
    return f"mcp.session.{session_id}"


def resource_group(uri: str) -> str:
    return f"mcp.resource.{hashlib.sha256(uri.encode()).hexdigest()[:48]}"


def key(request_id: Any) -> Any:
    """Request ids compare by JSON value: ``1`` and ``"1"`` are different ids."""
    return (type(request_id).__name__, request_id)


async def publish(group: str, event: dict[str, Any]) -> None:
    """Send ``event`` to a group if a channel layer is configured."""
    layer = get_channel_layer()
    if layer is not None:
        await layer.group_send(group, event)


async def publish_to_session(session_id: str, event: dict[str, Any]) -> None:
    await publish(session_group(session_id), event)


async def deliver_client_response(session_id: str, message: dict[str, Any]) -> None:
    """Hand a legacy client's answer to the server request waiting for it, wherever that is."""
    future = pending_client_requests.get((session_id, key(message.get("id"))))
    if future is not None:
        if not future.done():
            future.set_result(message)
        return
    await publish_to_session(session_id, {"type": "mcp.client_response", "message": message})


async def cancel_request(session_id: str, request_id: Any) -> None:
    """Cancel a legacy request in flight on this worker or on another (digest §4.9)."""
    task = in_flight.get((session_id, key(request_id)))
    if task is not None:
        task.cancel()
        return
    await publish_to_session(session_id, {"type": "mcp.cancel", "request_id": request_id})


def cancel_session_requests(session_id: str) -> None:
    """Cancel this worker's requests of a session that has ended."""
    for (owner, _), task in list(in_flight.items()):
        if owner == session_id:
            task.cancel()
