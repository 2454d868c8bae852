"""
The example project that ``scripts/demo`` serves, for the views' live and browser tests: migrated
on a fresh SQLite file, loaded with its demo data, run by a real daphne process. One per test
module, so each module's lends and loans start from the demo data.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.live import ROOT, LiveServer, migrate, server_env


@pytest.fixture(scope="module")
def example_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The example project's environment: its settings and a fresh SQLite file with the demo data."""
    env = {"DJANGO_SETTINGS_MODULE": "example_project.settings",
           "DEMO_SQLITE": str(tmp_path_factory.mktemp("views-demo") / "demo.sqlite3")}
    migrate(env)
    loaded = subprocess.run([sys.executable, "manage.py", "mcp_demo_data"], cwd=ROOT, env=server_env(env),
                            capture_output=True, text=True, timeout=60, check=True)
    assert "Demo data ready" in loaded.stdout, loaded.stdout
    return env


@pytest.fixture(scope="module")
def example_server(example_env: dict[str, str]) -> Iterator[LiveServer]:
    """daphne serving the example project (``example_project.asgi``)."""
    with LiveServer("example_project.asgi:application", env=example_env, name="views-example") as server:
        yield server
