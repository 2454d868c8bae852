"""The event loop a process keeps for callers without one (``django_mcp.transports.portal``)."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import threading
import warnings

import pytest

from django_mcp.transports.portal import EventLoopThread


@pytest.fixture
def loop_thread():
    thread = EventLoopThread(name="test-loop")
    yield thread
    thread.stop(grace=0.5)


async def where() -> tuple[asyncio.AbstractEventLoop, str]:
    return asyncio.get_running_loop(), threading.current_thread().name


def test_runs_coroutines_on_one_loop_in_its_own_thread(loop_thread: EventLoopThread) -> None:
    first_loop, first_thread = loop_thread.run(where())
    second_loop, second_thread = loop_thread.run(where())
    assert first_loop is second_loop
    assert first_thread == second_thread == "test-loop"
    assert threading.current_thread().name != "test-loop"


def test_a_task_left_behind_keeps_running_after_the_call(loop_thread: EventLoopThread) -> None:
    """What a request starts and leaves (a batch of session rows) finishes after the request."""
    done = threading.Event()

    async def leave_a_task() -> None:
        async def later() -> None:
            await asyncio.sleep(0.05)
            done.set()

        asyncio.get_running_loop().create_task(later())

    loop_thread.run(leave_a_task())
    assert done.wait(5)


def test_errors_reach_the_caller(loop_thread: EventLoopThread) -> None:
    async def fail() -> None:
        raise LookupError("nope")

    with pytest.raises(LookupError, match="nope"):
        loop_thread.run(fail())
    assert loop_thread.run(where())[1] == "test-loop"  # and the loop serves on


def test_threads_share_the_loop(loop_thread: EventLoopThread) -> None:
    loops = []

    def call() -> None:
        loops.append(loop_thread.run(where())[0])

    callers = [threading.Thread(target=call) for _ in range(8)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(10)
    assert len(loops) == 8 and len(set(map(id, loops))) == 1


def test_a_forked_process_starts_a_loop_of_its_own(loop_thread: EventLoopThread) -> None:
    """gunicorn --preload forks after import: the child has no thread of the parent's, so it starts one."""
    parent_loop = loop_thread.run(where())[0]
    read, write = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns of fork() in a process with threads: here that is the point.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            child_loop, name = loop_thread.run(where())
            os.write(write, b"new" if child_loop is not parent_loop and name == "test-loop" else b"same")
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 10) == b"new"
    finally:
        os.close(read)
        os.waitpid(pid, 0)


def test_a_fork_while_another_thread_starts_the_loop_does_not_deadlock_the_child(loop_thread: EventLoopThread) -> None:
    """The start-up lock, held by some thread of the parent at the fork, is a new one in the child."""
    read, write = os.pipe()
    with loop_thread._lock, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through the pipe
            try:
                os.write(write, b"ok" if loop_thread.run(where())[1] == "test-loop" else b"no")
            finally:
                os._exit(0)
    os.close(write)
    ready: list[int] = []
    try:
        ready, _, _ = select.select([read], [], [], 10)
        assert ready and os.read(read, 10) == b"ok", "the child hung on the parent's lock"
    finally:
        os.close(read)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_stop_runs_its_hooks_then_ends_the_thread(loop_thread: EventLoopThread) -> None:
    ran = []

    async def flush() -> None:
        await asyncio.sleep(0.01)
        ran.append("flushed")

    async def never_ends() -> None:
        await asyncio.sleep(3600)

    loop_thread.before_stop.append(flush)
    loop_thread.submit(never_ends())
    thread = loop_thread.thread
    loop_thread.stop(grace=1)
    assert ran == ["flushed"]
    assert thread is not None and not thread.is_alive()
    assert loop_thread.run(where())[1] == "test-loop"  # used again: a new loop
