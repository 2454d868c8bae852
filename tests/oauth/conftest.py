"""Live OAuth servers: the test settings with ``MCP_TEST_OAUTH=1`` (authentication required)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

import pytest

from tests.live import LiveServer

from .flow import create_user


PASSWORDS = {"alice": "alice-pass-1", "admin": "admin-pass-1", "carol": "carol-pass-1"}


@pytest.fixture(scope="session")
def oauth_env(sqlite_server_env: Mapping[str, str]) -> Mapping[str, str]:
    """The session's migrated SQLite database, with users alice, admin (staff) and carol."""
    env = {**sqlite_server_env, "MCP_TEST_OAUTH": "1"}
    for username, password in PASSWORDS.items():
        create_user(env, username, password, staff=username == "admin")
    return MappingProxyType(env)


@pytest.fixture(scope="module")
def oauth_server(oauth_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with LiveServer(env=oauth_env, name="live-oauth") as server:
        yield server
