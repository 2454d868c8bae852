"""
Fixtures shared by the tasks live tests (imported by name into each module; not a conftest, so
nothing here reaches other modules of this folder): clients that cancel their leftovers, and the
users of the ownership tests, created once in the live servers' database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from tests.live import LiveServer

from .clients import Modern, Session, create_users


USERS = ("taskalice", "taskbob", "taskpager", "limitcarol", "limitdan", "limiterin")


@pytest.fixture(scope="session")
def task_users(sqlite_server_env: Mapping[str, str]) -> tuple[str, ...]:
    """The users of the tasks live tests; their API keys are ``<name>-key``."""
    create_users(sqlite_server_env, *USERS)
    return USERS


@pytest.fixture
def modern(live_server_mcp: LiveServer) -> Iterator[Callable[..., Modern]]:
    """Make 2026-07-28 clients of the live server; what they left running is cancelled afterwards."""
    made: list[Modern] = []

    def make(**kwargs: Any) -> Modern:
        client = Modern(live_server_mcp, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.cancel_all()


@pytest.fixture
def session(live_server_mcp: LiveServer) -> Iterator[Callable[..., Session]]:
    """Open 2025-11-25 sessions on the live server; what they left running is cancelled afterwards."""
    opened: list[Session] = []

    def open_one(**kwargs: Any) -> Session:
        opened.append(Session.open(live_server_mcp, **kwargs))
        return opened[-1]

    yield open_one
    for one in opened:
        one.cancel_all()
