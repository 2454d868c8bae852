"""
Telling connected clients that something changed.

List-changed notifications reach every legacy session's GET stream and every 2026-07-28
``subscriptions/listen`` stream that asked for them; resource updates reach whoever subscribed to
that URI. They travel over the channel layer, so a change made on one worker reaches clients held
by any other::

    from django_mcp.notifications import notify_resource_updated
    notify_resource_updated(f"books://{book.pk}")       # from sync code, e.g. a post_save receiver
"""

from typing import Literal

from asgiref.sync import async_to_sync

from .fanout import BROADCAST_GROUP, NOTIFY, publish, resource_group


ListKind = Literal["tools", "prompts", "resources"]
_LIST_METHODS = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


async def anotify_list_changed(kind: ListKind) -> None:
    """Announce that the list of ``tools``, ``prompts`` or ``resources`` changed."""
    if kind not in _LIST_METHODS:
        raise ValueError(f"kind must be one of {', '.join(_LIST_METHODS)}")
    await publish(BROADCAST_GROUP, {"type": NOTIFY, "kind": kind,
                                    "message": {"jsonrpc": "2.0", "method": _LIST_METHODS[kind]}})


async def anotify_resource_updated(uri: str) -> None:
    """Announce that the resource at ``uri`` changed."""
    # Each stream delivers it only if its user may read ``uri`` now (transports/visibility.py).
    await publish(resource_group(uri), {"type": NOTIFY, "kind": "resource", "uri": uri, "visibility": {"uris": [uri]},
                                        "message": {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                                    "params": {"uri": uri}}})


def notify_list_changed(kind: ListKind) -> None:
    """Sync twin of :func:`anotify_list_changed`."""
    async_to_sync(anotify_list_changed)(kind)


def notify_resource_updated(uri: str) -> None:
    """Sync twin of :func:`anotify_resource_updated`."""
    async_to_sync(anotify_resource_updated)(uri)
