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

Under the test client (:mod:`django_mcp.test`) all of it runs instead on the test's own thread and
database connection, with no connection closed (:func:`on_callers_connection`): a test inside
``django.test.TestCase`` holds its rows in a transaction that only that connection sees, and
Django's own test client likewise keeps its connection open across the requests it makes.
"""

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

from asgiref.sync import AsyncToSync, SyncToAsync, markcoroutinefunction
from channels.db import database_sync_to_async
from django.db import InterfaceError, OperationalError, close_old_connections, connections, router


# True while the test client serves a request: sync work runs thread-sensitively (asgiref sends it
# to the thread that called async_to_sync: the test's) and keeps its connection.
_callers_connection: contextvars.ContextVar[bool] = contextvars.ContextVar("django_mcp_callers_connection",
                                                                           default=False)


@contextlib.contextmanager
def on_callers_connection() -> Iterator[None]:
    """
    Within this block (and the tasks it starts), the sync code of a request runs where asgiref's
    thread-sensitive code runs — the thread of an enclosing ``async_to_sync``, such as a test
    method's — and no database connection is closed around it. For the test client only: a
    server keeps its sync work off the event loop's thread and its connections fresh.
    """
    token = _callers_connection.set(True)
    try:
        yield
    finally:
        _callers_connection.reset(token)


def serving_on_callers_connection() -> bool:
    """Whether the request being served runs its sync work on the caller's connection (the test client)."""
    return _callers_connection.get()


def in_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An awaitable twin of the sync callable ``fn``, run on the loop's thread pool."""
    pooled = database_sync_to_async(fn, thread_sensitive=False)
    inline = SyncToAsync(fn, thread_sensitive=True)

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        # Returns the coroutine of one or the other: no coroutine of its own on the hot path.
        return (inline if _callers_connection.get() else pooled)(*args, **kwargs)

    run.pooled, run.inline = pooled, inline  # type: ignore[attr-defined]
    return markcoroutinefunction(run)


def in_database_thread(fn: Callable[..., Any], model: Any, *, idempotent: bool = False) -> Callable[..., Any]:
    """
    An awaitable twin of ``fn``, a query of django_mcp's own on ``model``'s database: on the pool
    where the database takes writers side by side, so the worker's queries need not queue for one
    thread; on SQLite on the one thread Django's thread-sensitive code runs on, since SQLite has one
    writer at a time anyway and its in-memory test databases refuse a second connection's write at
    once instead of waiting.

    Lighter than :func:`in_thread`, because ``fn`` is django_mcp's own database work and nothing
    else: it reads no context variable and calls no ``async_to_sync``, so it needs neither the
    context copied to the thread and back nor asgiref's thread-local loop, which together cost
    more than the statement of a cold session's ``initialize`` or ``DELETE``. Old connections are
    still closed before and after, as ``database_sync_to_async`` does.

    ``idempotent``: ``fn`` may run twice with the same effect (a read). Its statement is then the
    health check (:func:`_with_fresh_connections`) instead of Django's ``SELECT 1`` before it.
    """
    # The configured engine, not connections[alias].vendor: on the event loop's thread that would
    # make a connection wrapper, which each request then kept (about 2.4 KiB a GET stream).
    alias = router.db_for_write(model)
    engine = connections.settings[alias]["ENGINE"]
    sqlite = "sqlite" in engine or "spatialite" in engine

    # Made for each call of a store's method and awaited once: nothing is built here that the
    # common path does not use (asgiref's SyncToAsync and functools.wraps cost about 3 us a call).
    async def run(*args: Any, **kwargs: Any) -> Any:
        if _callers_connection.get():
            return await SyncToAsync(fn, thread_sensitive=True)(*args, **kwargs)
        executor = None  # the loop's pool
        if sqlite:
            executor = _single_thread_executor()
            if executor is None:
                # Somewhere asgiref would choose another thread (a sync caller above, a
                # ThreadSensitiveContext): let it choose, as it always did.
                return await database_sync_to_async(fn)(*args, **kwargs)
        call = functools.partial(_with_fresh_connections, fn, args, kwargs, alias if idempotent else None)
        return await asyncio.get_running_loop().run_in_executor(executor, call)

    return run


def _single_thread_executor() -> Any:
    """
    The executor asgiref's ``SyncToAsync(thread_sensitive=True)`` would run on here, when it is its
    one shared thread; None where it would pick another (its ``__call__`` makes the same tests).
    """
    try:
        if (getattr(AsyncToSync.executors, "current", None) is not None
                or SyncToAsync.thread_sensitive_context.get(None) is not None
                or asyncio.get_running_loop() in AsyncToSync.loop_thread_executors
                or SyncToAsync.deadlock_context.get(False)):
            return None
        return SyncToAsync.single_thread_executor
    except AttributeError:  # an asgiref that decides differently: leave the choice to it
        return None


def _with_fresh_connections(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                            checked_by_use: str | None = None) -> Any:
    """
    ``fn`` between two ``close_old_connections()``, as Channels' ``DatabaseSyncToAsync.thread_handler``
    does: a connection past ``CONN_MAX_AGE``, or broken by an earlier error, is not used, nor kept.

    ``checked_by_use``: the alias of an idempotent ``fn``'s database. A connection kept there from
    an earlier request is used without Django's health check (``CONN_HEALTH_CHECKS``: a ``SELECT 1``
    round trip before the first query, which costs as much as a read by primary key), and if it
    turns out lost — PostgreSQL restarted, a proxy or ``idle_session_timeout`` closed it — ``fn``
    runs once more on a new one. The request sees what the health check would have given it: its
    answer, not the lost connection's error. Only for ``fn`` that may run twice: a write might have
    been applied before its connection broke.
    """
    close_old_connections()
    connection = connections[checked_by_use] if checked_by_use is not None else None
    trusted = (connection is not None and connection.connection is not None
               and connection.health_check_enabled and not connection.health_check_done)
    if trusted:
        connection.health_check_done = True  # fn's own statement checks it
    try:
        return fn(*args, **kwargs)
    except (OperationalError, InterfaceError):
        # An error of the statement itself (a timeout, say) leaves a usable connection: raise it.
        # Asked only on this path, so the round trip is paid only when something failed.
        if not trusted or connection.in_atomic_block or connection.is_usable():
            raise
        connection.close()
        return fn(*args, **kwargs)
    finally:
        close_old_connections()
