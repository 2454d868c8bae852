"""
Where the sync code users write runs: tools, resources and prompts written as plain functions,
sync permission checks and completers; and django_mcp's own database work: the call log, the tool
rows, and on databases other than SQLite the session and event stores (:func:`in_database_thread`).

On a thread from the event loop's pool, with Django's connection handling around each call
(Channels' ``database_sync_to_async``: old connections closed before and after, so a pool thread
keeps a connection only as ``CONN_MAX_AGE`` allows). Not thread-sensitive: each such call is
complete in itself, so it need not share one thread with the request's other sync calls, and
calls of different requests run side by side instead of queueing for one thread. A pool reuses
its threads, where a thread per request (``ThreadSensitiveContext``, which the transports keep for
code that asks for thread-sensitivity, such as the async ORM) would be made and ended every time.
"""

from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async
from django.db import connections, router


def in_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An awaitable twin of the sync callable ``fn``, run on the loop's thread pool."""
    return database_sync_to_async(fn, thread_sensitive=False)


def in_database_thread(fn: Callable[..., Any], model: Any) -> Callable[..., Any]:
    """
    An awaitable twin of ``fn``, a query of django_mcp's own on ``model``'s database: on the pool
    (:func:`in_thread`) where the database takes writers side by side, so the worker's queries need
    not queue for one thread; thread-sensitive on SQLite, which has one writer at a time anyway and
    whose in-memory test databases refuse a second connection's write at once instead of waiting.
    """
    # The configured engine, not connections[alias].vendor: on the event loop's thread that would
    # make a connection wrapper, which each request then kept (about 2.4 KiB a GET stream).
    engine = connections.settings[router.db_for_write(model)]["ENGINE"]
    if "sqlite" in engine or "spatialite" in engine:
        return database_sync_to_async(fn)
    return in_thread(fn)
