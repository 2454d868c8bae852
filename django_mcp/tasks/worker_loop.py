"""
Where tasks' work runs in a task framework's worker process (``db_worker``, RQ, Celery):
``runner.work`` hands each task here. One event loop for the process's whole life, and the
work's queries on the worker's own thread and database connection (:class:`_TaskWorkerLoop`).
"""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, Future
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections

from . import store


class _TaskWorkerLoop:
    """
    The one event loop that runs tasks' work in a task framework's worker process (``db_worker``,
    RQ, Celery), on a thread of its own, from the first task to the process's end. One loop
    rather than ``async_to_sync``'s new loop and thread for each task: what lives with a loop —
    the channel layer's Redis connections that announce each task's end, the loop's thread pool —
    is made once instead of once per task (with channels_redis, the connection alone doubled
    the worker's time per short task). The work's own queries still run on the worker's thread,
    which waits for the task meanwhile (:class:`_WorkerThread`), on the connection the task
    framework checks and closes around each task.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def run(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run the coroutine ``work()`` makes on the loop; this thread serves its queries until it is done."""
        with self.lock:
            if self.loop is None or self.thread is None or not self.thread.is_alive():
                self.loop = asyncio.new_event_loop()
                self.thread = threading.Thread(target=self.loop.run_forever, name="django_mcp task worker",
                                               daemon=True)
                self.thread.start()
            loop = self.loop
        here = _WorkerThread()
        done = asyncio.run_coroutine_threadsafe(_work(work, here), loop)
        here.serve_until(done)
        done.result()


class _WorkerThread(Executor):
    """The thread that waits for a task's work, as an executor: what is submitted runs there, in order."""

    def __init__(self) -> None:
        self.items: queue.SimpleQueue[tuple[Future[Any], Any] | None] = queue.SimpleQueue()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.items.put((future, functools.partial(fn, *args, **kwargs)))
        return future

    def serve_until(self, done: Future[Any]) -> None:
        done.add_done_callback(lambda _: self.items.put(None))
        while (item := self.items.get()) is not None:
            future, call = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as exc:  # handed to the awaiting coroutine, as an executor does
                future.set_exception(exc)


async def _work(work: Callable[[], Awaitable[None]], thread: _WorkerThread) -> None:
    token = store.worker_thread.set(thread)
    try:
        await work()
    finally:
        store.worker_thread.reset(token)
        # Thread-sensitive code of the work (the async ORM in an async tool) ran on asgiref's one
        # thread for it: that thread's connection is checked, as the worker's own is, after each task.
        await _close_old_connections()


_close_old_connections = sync_to_async(close_old_connections, thread_sensitive=True)


_worker_loop = _TaskWorkerLoop()


def run_in_worker(work: Callable[[], Awaitable[None]]) -> None:
    """Run ``work()`` (a task's work: ``runner.run``) in this worker process, and wait for it."""
    _worker_loop.run(work)
