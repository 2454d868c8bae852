"""
One event loop per process for code that is called from threads without one: the plain Django
view under a WSGI server (gunicorn, uWSGI, ``manage.py runserver``).

The MCP endpoint is asynchronous throughout: sessions are written in batches by a task that
outlives the request (``stores/pending_rows.py``), channel-layer calls keep connections per loop,
caches and locks belong to a loop. Under an ASGI server all of that lives on the server's loop.
A WSGI worker has none, and asgiref's ``async_to_sync`` would make one per request — a new thread
and a new loop each time (about 0.65 ms here), and every task a request leaves behind dies with
it. So each process gets one loop, in a daemon thread started on first use, and a request hands
its coroutine over and waits for the result (0.05-0.2 ms, most of it switching threads). After a ``fork()`` (gunicorn's
``--preload``) the child starts its own: a thread does not survive the fork.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

logger = logging.getLogger("django_mcp.transports")

T = TypeVar("T")

# Seconds the loop is given at exit to finish what requests left behind (a batch of session rows).
SHUTDOWN_GRACE_SECONDS = 2.0


class EventLoopThread:
    """An event loop running in a daemon thread of its own, for sync callers to submit work to."""

    def __init__(self, name: str = "django_mcp-loop") -> None:
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.pid: int | None = None
        self._lock = threading.Lock()
        #: Coroutine functions run on the loop before it stops, in order.
        self.before_stop: list[Callable[[], Awaitable[Any]]] = []
        if hasattr(os, "register_at_fork"):
            forget = weakref.WeakMethod(self._forget_parents_loop)
            os.register_at_fork(after_in_child=lambda: (method := forget()) is not None and method())

    def _forget_parents_loop(self) -> None:
        # In a forked child the parent's loop thread does not exist, and a lock another of its
        # threads held at the fork would stay held for ever: start afresh.
        self._lock = threading.Lock()
        self.loop = self.thread = None
        self.pid = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and return its result; the calling thread waits."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.running_loop())
        try:
            return future.result()
        except BaseException:
            # The caller is going away (KeyboardInterrupt, a worker's timeout): so does its work.
            future.cancel()
            raise

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coroutine`` on the loop without waiting for it."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.running_loop())

    def running_loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use in this process."""
        loop = self.loop
        if loop is not None and self.pid == os.getpid():
            return loop
        with self._lock:
            if self.loop is None or self.pid != os.getpid():
                self._start()
            assert self.loop is not None
            return self.loop

    def _start(self) -> None:
        loop = new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            try:
                loop.run_forever()
            finally:
                loop.close()

        thread = threading.Thread(target=serve, name=self.name, daemon=True)
        thread.start()
        ready.wait()
        self.loop, self.thread, self.pid = loop, thread, os.getpid()

    def stop(self, grace: float = SHUTDOWN_GRACE_SECONDS) -> None:
        """
        Run :attr:`before_stop` (each for up to ``grace`` seconds), cancel what is left and stop
        the loop. Called at exit: a worker that its WSGI server stops gracefully writes the
        session rows it owes first.
        """
        loop, thread = self.loop, self.thread
        if loop is None or thread is None or self.pid != os.getpid() or not thread.is_alive():
            return
        self.loop = self.thread = None

        async def finish() -> None:
            for hook in self.before_stop:
                try:
                    await asyncio.wait_for(hook(), grace)
                except Exception:  # pragma: no cover - at exit, the log is all that is left
                    logger.warning("%r did not finish before the event loop stopped", hook, exc_info=True)
            left = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
            await loop.shutdown_asyncgens()

        try:
            asyncio.run_coroutine_threadsafe(finish(), loop).result(grace * (len(self.before_stop) + 1))
        except Exception:  # pragma: no cover - at exit, the log is all that is left
            logger.warning("The event loop of the plain view did not finish in time", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(grace)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """
    uvloop's loop where it is installed (``uvicorn[standard]`` brings it), else asyncio's: each
    request's hand-over to the loop and back costs about a fifth less on uvloop.
    """
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


portal = EventLoopThread()
atexit.register(portal.stop)
