"""
Where django_mcp's own queries run (django_mcp/threads.py): on SQLite thread-sensitively, as
Django runs them; on other databases on the loop's thread pool, side by side.
"""

import asyncio
import threading

import pytest
from channels.db import DatabaseSyncToAsync
from django.db import connections

from django_mcp import threads
from django_mcp.models import McpSession


def test_sqlite_keeps_its_queries_on_one_thread():
    wrapped = threads.in_database_thread(len, McpSession)
    assert isinstance(wrapped, DatabaseSyncToAsync) and wrapped._thread_sensitive


def test_other_databases_query_on_the_pool(monkeypatch):
    # The configured engine is what decides (connections.settings, read once from DATABASES).
    monkeypatch.setitem(connections.settings["default"], "ENGINE", "django.db.backends.postgresql")
    wrapped = threads.in_database_thread(len, McpSession)
    assert isinstance(wrapped, DatabaseSyncToAsync) and not wrapped._thread_sensitive


async def test_pooled_queries_run_side_by_side():
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

    results = await asyncio.wait_for(asyncio.gather(threads.in_thread(first)(), threads.in_thread(second)()), 10)
    assert results == ["first", "second"]
