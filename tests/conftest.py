"""
Shared fixtures for the tests that drive real daphne servers (see ``tests/live.py``).

- ``sqlite_server_env``: environment for live servers on a fresh SQLite file (session-wide, migrated
  once) with the in-memory channel layer.
- ``live_server_mcp``: one session-wide ``LiveServer`` on that environment (not called
  ``live_server``: pytest-django has a fixture by that name).
- ``example_env`` / ``example_server``: the example project that ``scripts/demo`` serves, migrated
  on a fresh SQLite file with its demo data, under daphne; one per test module, so each module's
  lends and loans start from the demo data.
- ``services``: PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 for the multi-worker tests.
  Skips when they are absent, except under ``CI=true`` where that is a failure. Its value is the
  environment for live servers on a fresh, migrated PostgreSQL database and a unique Redis prefix.

Tests using ``live_server_mcp`` / ``sqlite_server_env`` are marked ``live`` and tests using
``services`` are marked ``services`` automatically, so ``-m "not live"`` runs only in-process tests.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from types import MappingProxyType

import pytest

from tests.live import ROOT, LiveServer, fresh_sqlite_env, migrate, server_env


POSTGRES = ("127.0.0.1", 5432)
REDIS = ("127.0.0.1", 6379)
SERVICES_REASON = (
    "needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379 for the multi-worker test; CI always has them"
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def tcp_open(address: tuple[str, int], timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection(address, timeout=timeout):
            return True
    except OSError:
        return False


def missing_services() -> list[str]:
    """Names of the services (PostgreSQL, Redis) that do not accept TCP connections."""
    missing = []
    if not tcp_open(POSTGRES):
        missing.append("PostgreSQL on 127.0.0.1:5432")
    if not tcp_open(REDIS):
        missing.append("Redis on 127.0.0.1:6379")
    return missing


def services_available() -> bool:
    """True when PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) accept TCP connections."""
    return not missing_services()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & {"live_server_mcp", "sqlite_server_env", "example_server", "services"}:
            item.add_marker(pytest.mark.live)
        if "services" in names:
            item.add_marker(pytest.mark.services)


@pytest.fixture(scope="session")
def sqlite_server_env(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
    """Read-only env for live servers: a fresh, migrated SQLite file and the in-memory layer."""
    return MappingProxyType(fresh_sqlite_env(tmp_path_factory.mktemp("live-sqlite")))


@pytest.fixture(scope="session")
def live_server_mcp(sqlite_server_env: Mapping[str, str]) -> Iterator[LiveServer]:
    """A daphne server (``tests.asgi:application``) on the session's SQLite env."""
    with LiveServer(env=sqlite_server_env, name="live-sqlite") as server:
        yield server


@pytest.fixture(scope="module")
def example_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example project's environment: its settings and a fresh SQLite file with the demo data."""
    folder = tmp_path_factory.mktemp("demo")
    # DEMO_TRACES as scripts/demo sets it: the example's OpenTelemetry spans, a JSON line each.
    env = {"DJANGO_SETTINGS_MODULE": "example_project.settings", "DEMO_SQLITE": str(folder / "demo.sqlite3"),
           "DEMO_TRACES": str(folder / "traces.jsonl")}
    migrate(env)
    loaded = subprocess.run([sys.executable, "manage.py", "mcp_demo_data"], cwd=ROOT, env=server_env(env),
                            capture_output=True, text=True, timeout=60, check=True)
    assert "Demo data ready: 15 authors, 247 books" in loaded.stdout and "5 loans" in loaded.stdout, loaded.stdout
    return env


@pytest.fixture(scope="module")
def example_server(example_env: dict[str, str]) -> Iterator[LiveServer]:
    """daphne serving the example project (``example_project.asgi``)."""
    with LiveServer("example_project.asgi:application", env=example_env, name="example") as server:
        yield server


@pytest.fixture(scope="session")
def services() -> Iterator[Mapping[str, str]]:
    """
    Require PostgreSQL and Redis. Skips when absent (fails under CI=true). Yields a read-only env
    for live servers: ``MCP_TEST_DATABASE=postgres`` on a fresh database ``MCP_TEST_PG_NAME``
    (created and migrated here, dropped at the end), ``MCP_TEST_CHANNEL_LAYER=redis`` with a unique
    ``MCP_TEST_REDIS_PREFIX``.
    """
    missing = missing_services()
    if missing:
        reason = f"{SERVICES_REASON} (not reachable: {', '.join(missing)})"
        if in_ci():
            pytest.fail(f"CI=true but services are down: {reason}", pytrace=False)
        pytest.skip(reason=reason)

    import psycopg
    from psycopg import sql

    token = uuid.uuid4().hex[:10]
    db_name = f"django_mcp_live_{token}"
    admin_dsn = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db_name)))
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "MCP_TEST_DATABASE": "postgres",
        "MCP_TEST_PG_NAME": db_name,
        "MCP_TEST_CHANNEL_LAYER": "redis",
        "MCP_TEST_REDIS_PREFIX": f"django_mcp_live_{token}",
    }
    try:
        migrate(env)
        yield MappingProxyType(env)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db_name)))
