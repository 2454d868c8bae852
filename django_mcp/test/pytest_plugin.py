"""
pytest fixtures for projects built on django_mcp, loaded by pytest on its own once the package is
installed (entry point ``pytest11``), beside pytest-django's::

    import pytest

    @pytest.mark.django_db
    def test_search(mcp_client, django_user_model):
        mcp_client.force_authenticate(django_user_model.objects.create_user("ada"))
        assert "Dune" in mcp_client.call_tool("search_books", query="dune").text

The client's requests reach the database through pytest-django's ``db`` (the test's transaction)
in sync tests; async tests use ``transactional_db``, as pytest-django asks of any async test that
touches the database. Nothing here imports Django until a fixture is used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def mcp_client_factory() -> Callable[..., Any]:
    """
    Makes :class:`~django_mcp.test.McpClient` objects: ``mcp_client_factory("2025-11-25",
    elicitation=[...])`` takes the client's arguments.
    """
    from django_mcp.test import McpClient

    def make(*args: Any, **kwargs: Any) -> McpClient:
        return McpClient(*args, **kwargs)

    return make


@pytest.fixture
def mcp_client(mcp_client_factory: Callable[..., Any]) -> Any:
    """A :class:`~django_mcp.test.McpClient` speaking the newest revision (2026-07-28), anonymous."""
    return mcp_client_factory()


@pytest.fixture(scope="session")
def _live_mcp_server_process(django_db_setup: Any, django_db_blocker: Any) -> Any:
    """One daphne of the project for the session, started on the test databases once they exist."""
    from django_mcp.test.live import LiveMcpServer

    with django_db_blocker.unblock():
        server = LiveMcpServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def live_mcp_server(_live_mcp_server_process: Any, transactional_db: Any) -> Any:
    """
    A real daphne serving the project on a free port of 127.0.0.1 (``.url``, ``.mcp_url``), as
    pytest-django's ``live_server`` serves Django: for clients over sockets (the official SDK, a
    browser). It reads the test database, so the test's rows are committed (``transactional_db``);
    SQLite's test database must be a file (``DATABASES[...]["TEST"]["NAME"]``).
    """
    return _live_mcp_server_process
