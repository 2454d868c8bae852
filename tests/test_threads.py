"""
Where django_mcp's own queries run (django_mcp/threads.py): on SQLite on the thread asgiref's
thread-sensitive code would use, as Django runs them; on other databases on the loop's thread
pool, side by side; old connections closed around each, as Channels does.
"""

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable

import pytest
from asgiref.sync import ThreadSensitiveContext, async_to_sync, sync_to_async
from django.db import connection, connections

from django_mcp import threads
from django_mcp.models import McpSession
from tests.live import ROOT, server_env


def thread_id() -> int:
    return threading.get_ident()


async def side_by_side(wrap: Callable[[Callable[[], str]], Callable[[], Awaitable[str]]]) -> list[str]:
    """Run two sync functions through ``wrap`` at once; each finishes only if the other runs beside it."""
    started, release = threading.Event(), threading.Event()

    def first() -> str:
        started.set()
        # On one shared thread second() could not run until this returned: the wait would time out.
        assert release.wait(5), "second() never ran beside first()"
        return "first"

    def second() -> str:
        started.wait(5)
        release.set()  # only reached while first() still holds its own thread
        return "second"

    return await asyncio.wait_for(asyncio.gather(wrap(first)(), wrap(second)()), 10)


@pytest.mark.django_db(transaction=True)
async def test_sqlite_queries_run_on_the_thread_sensitive_thread():
    ours = await threads.in_database_thread(thread_id, McpSession)()
    assert ours == await sync_to_async(thread_id, thread_sensitive=True)()
    assert ours != threading.get_ident()


@pytest.mark.django_db(transaction=True)
async def test_in_a_thread_sensitive_context_sqlite_queries_go_where_asgiref_sends_them():
    async with ThreadSensitiveContext():
        ours = await threads.in_database_thread(thread_id, McpSession)()
        assert ours == await sync_to_async(thread_id, thread_sensitive=True)()
    assert ours != await sync_to_async(thread_id, thread_sensitive=True)()  # that context's own thread


@pytest.mark.django_db(transaction=True)
def test_under_a_sync_caller_sqlite_queries_run_on_its_thread():
    async def ask() -> int:
        return await threads.in_database_thread(thread_id, McpSession)()

    assert async_to_sync(ask)() == threading.get_ident()


async def test_other_databases_query_on_the_pool(monkeypatch):
    # The configured engine is what decides (connections.settings, read once from DATABASES).
    monkeypatch.setitem(connections.settings["default"], "ENGINE", "django.db.backends.postgresql")
    assert await side_by_side(lambda fn: threads.in_database_thread(fn, McpSession)) == ["first", "second"]


@pytest.mark.django_db(transaction=True)
async def test_old_connections_are_looked_at_before_and_after_each_call():
    # close_old_connections() (what Channels' database_sync_to_async runs around a call) marks a
    # kept connection for a fresh health check, and closes one past CONN_MAX_AGE or broken by an
    # error. (The in-memory test database is never closed, so the mark is what a test can see.)
    def checked_state() -> bool:
        return connection.health_check_done

    def query_and_mark() -> bool:
        fresh = not connection.health_check_done
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        connection.health_check_done = True
        return fresh

    await threads.in_database_thread(query_and_mark, McpSession)()
    assert not await sync_to_async(checked_state, thread_sensitive=True)(), "not looked at after the call"

    def mark() -> None:
        connection.health_check_done = True

    await sync_to_async(mark, thread_sensitive=True)()
    assert await threads.in_database_thread(query_and_mark, McpSession)(), "not looked at before the call"


@pytest.mark.django_db(transaction=True)
async def test_errors_and_arguments_pass_through():
    def divide(a: int, *, by: int) -> float:
        return a / by

    assert await threads.in_database_thread(divide, McpSession)(6, by=3) == 2
    with pytest.raises(ZeroDivisionError):
        await threads.in_database_thread(divide, McpSession)(1, by=0)


async def test_pooled_queries_run_side_by_side():
    assert await side_by_side(threads.in_thread) == ["first", "second"]


@pytest.mark.django_db
def test_under_the_test_client_sync_work_runs_on_the_callers_thread_and_keeps_its_connection():
    # django_mcp.test's mode: a TestCase's rows live in a transaction only the test's connection
    # sees, so in_thread and in_database_thread run where async_to_sync was called from (this
    # thread), and close no connection (Django's test client disconnects close_old_connections too).
    caller = thread_id()
    seen = []

    def work() -> str:
        seen.append((thread_id(), id(connection.connection) if connection.connection else None))
        return "done"

    async def serve() -> list[str]:
        with threads.on_callers_connection():
            assert threads.serving_on_callers_connection()
            return [await threads.in_thread(work)(), await threads.in_database_thread(work, McpSession)()]

    connection.ensure_connection()
    kept = id(connection.connection)
    assert async_to_sync(serve)() == ["done", "done"]
    assert seen == [(caller, kept), (caller, kept)]
    assert not threads.serving_on_callers_connection()


@pytest.mark.django_db
def test_outside_it_sync_work_stays_off_the_callers_thread():
    caller = thread_id()
    assert async_to_sync(threads.in_thread(thread_id))() != caller


def test_an_idempotent_query_is_its_own_health_check_and_runs_again_on_a_lost_connection(services):
    # Needs PostgreSQL (the services fixture says why it skips): kept connections and a server
    # that can drop one. A child process (tests/threads_pg_script.py) runs on the services'
    # database with CONN_MAX_AGE and CONN_HEALTH_CHECKS as tests.settings sets them.
    result = subprocess.run([sys.executable, "-m", "tests.threads_pg_script"],
                            cwd=ROOT, env=server_env(services), timeout=120, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    # A kept connection that is fine: used as it is, no SELECT 1 before the read.
    assert report["kept_and_unchecked"] == {"same_backend": True, "health_checks": 0}
    # PostgreSQL dropped it since: the read fails on it, finds it unusable and runs once more on a new one.
    assert report["dropped"] == {"answered_by_new_backend": True, "runs": ["read", "read"], "health_checks": 1}
    # Anything not idempotent keeps Django's health check before its first statement.
    assert report["not_idempotent_still_checked"] == {"same_backend": True, "health_checks": 1}
    # An error of the statement itself, on a connection still usable, is raised, not run again.
    assert report["statement_error"] == {"error": "OperationalError", "runs": ["failing"]}
