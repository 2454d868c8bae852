"""
The live_mcp_server fixture: a pytest of its own (a project's suite would run it so) over
tests/test/live_project, on a SQLite test database in a file; and the clear error for SQLite's
in-memory one.
"""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_mcp.test.live import LiveMcpServer
from tests.live import ROOT


pytestmark = pytest.mark.live


def test_a_project_test_reaches_the_live_server_over_a_socket(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "MCP_TEST_DATABASE": "sqlite",
           "MCP_TEST_SQLITE": str(tmp_path / "db.sqlite3"),
           "MCP_TEST_SQLITE_TEST_NAME": str(tmp_path / "test.sqlite3"), "MCP_TEST_CHANNEL_LAYER": "memory"}
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                          "-o", "addopts=", str(ROOT / "tests" / "test" / "live_project")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-3000:]
    assert "3 passed" in ran.stdout, ran.stdout[-3000:]


@pytest.mark.django_db(transaction=True)
def test_an_in_memory_sqlite_test_database_is_a_clear_error():
    expected = r'SQLite in memory: give it a file, DATABASES\[.default.\]\["TEST"\]'
    with pytest.raises(ImproperlyConfigured, match=expected):
        LiveMcpServer().start()
