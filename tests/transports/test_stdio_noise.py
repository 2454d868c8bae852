"""
Issue 11: a stdio server's stdout carries protocol messages and nothing else, even in a project
that writes to stdout while it starts and while it serves (MCP spec 2025-11-25,
basic/transports#stdio: "The server MUST NOT write anything to its stdout that is not a valid MCP
message").

The project is ``tests.stdio_noisy_settings``: an app whose ``mcp.py`` prints and logs at import and
whose ``ready()`` does too, LOGGING with a handler on ``sys.stdout`` (root logger, INFO), and a tool
that prints, logs, writes to file descriptor 1 and starts a child process that prints. Each
server is a real subprocess on raw pipes; the client reads stdout line by line and every line
must be one JSON-RPC message, while every bit of noise must turn up on stderr (so the test would
notice noise that went missing instead of being redirected).

``tests.stdio_early_noisy_settings`` adds output from the settings module and from an app listed
before django_mcp; only ``python -m django_mcp.stdio`` redirects before those run (docs/stdio.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from tests.live import ROOT, migrate, server_env
from tests.stdio_noisy import noise
from tests.transports.stdio_driver import StdioProcess, modern, request, text_of


NOISY = "tests.stdio_noisy_settings"
EARLY_NOISY = "tests.stdio_early_noisy_settings"
MANAGE_PY = (sys.executable, "manage.py", "mcp_stdio")
ENTRY_POINT = (sys.executable, "-m", "django_mcp.stdio")

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def noisy_env(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
    """A migrated SQLite file and the in-memory channel layer (the noisy app has no models)."""
    path = tmp_path_factory.mktemp("stdio-noise") / "noise.sqlite3"
    env = {"MCP_TEST_DATABASE": "sqlite", "MCP_TEST_SQLITE": str(path), "MCP_TEST_CHANNEL_LAYER": "memory"}
    migrate(env)
    return env


def child_env(env: Mapping[str, str], settings: str, **overrides: str | None) -> dict[str, str]:
    """The child's environment; ``PYTHONUNBUFFERED=None`` leaves its stdout block-buffered, as on a pipe."""
    return server_env({**env, "DJANGO_SETTINGS_MODULE": settings, "DJANGO_MCP_USER": None,
                       "MCP_TEST_LOG_LEVEL": None, **overrides})


def assert_only_jsonrpc(raw_stdout: list[bytes]) -> None:
    """
    Every stdout line is one newline-terminated JSON-RPC 2.0 message
    (MCP spec 2025-11-25, basic/transports#stdio).
    """
    assert raw_stdout, "nothing on stdout at all"
    for line in raw_stdout:
        assert line.endswith(b"\n"), line[:200]
        try:
            message = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON-RPC message on stdout: {line[:200]!r}") from None
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line[:200]


def assert_on_stderr(stderr: str, markers: tuple[str, ...]) -> None:
    """The noise was made, and redirected rather than lost."""
    missing = [marker for marker in markers if marker not in stderr]
    assert not missing, f"missing from stderr: {missing}\n{stderr[-3000:]}"


LAUNCHES = [
    pytest.param(MANAGE_PY, NOISY, noise.LATE, id="manage.py"),
    pytest.param(ENTRY_POINT, NOISY, noise.LATE, id="entry-point"),
    pytest.param(ENTRY_POINT, EARLY_NOISY, noise.LATE + noise.EARLY, id="entry-point-early-noise"),
]


@pytest.mark.parametrize("buffering", [pytest.param("1", id="unbuffered"), pytest.param(None, id="buffered")])
@pytest.mark.parametrize(("command", "settings", "markers"), LAUNCHES)
def test_noise_never_reaches_stdout(noisy_env: Mapping[str, str], command: tuple[str, ...], settings: str,
                                    markers: tuple[str, ...], buffering: str | None) -> None:
    """
    Output at import time (``mcp.py`` autodiscovery, ``ready()``), from a LOGGING handler bound to
    ``sys.stdout`` before the apps were populated, and at run time (a tool's ``print``, its logging,
    ``os.write(1, …)`` and a child process inheriting fd 1) all lands on stderr; stdout holds only
    the answers — legacy and 2026-07-28 — whether Python's stdout is unbuffered or block-buffered.
    """
    process = StdioProcess(child_env(noisy_env, settings, PYTHONUNBUFFERED=buffering), command=list(command))
    try:
        process.initialize()
        legacy = process.call(request(1, "tools/call", {"name": "noisy_tool", "arguments": {}}), timeout=30)
        assert text_of(legacy["result"]) == ["quiet"], legacy
        current = process.call(modern(2, "tools/call", {"name": "noisy_tool", "arguments": {}}), timeout=30)
        assert text_of(current["result"]) == ["quiet"], current
        assert process.call(request(3, "ping"))["result"] == {}
        process.close_stdin()
        process.drain()
        assert process.wait(10) == 0, process.describe()
    finally:
        process.stop()
    assert_only_jsonrpc(process.raw_stdout)
    assert [m.get("id") for m in process.messages] == ["init", 1, 2, 3], process.messages
    assert_on_stderr(process.stderr, markers)


@pytest.mark.parametrize("command", [pytest.param(MANAGE_PY, id="manage.py"),
                                     pytest.param(ENTRY_POINT, id="entry-point")])
def test_print_config_is_alone_on_stdout(noisy_env: Mapping[str, str], command: tuple[str, ...]) -> None:
    """``--print-config`` in the noisy project: its JSON is all there is on stdout; the noise is on stderr."""
    result = subprocess.run([*command, "--print-config", "--user", "alice"], cwd=ROOT, capture_output=True,
                            env=child_env(noisy_env, NOISY, PYTHONUNBUFFERED=None), timeout=60, check=False)
    assert result.returncode == 0, result.stderr.decode()
    config: dict[str, Any] = json.loads(result.stdout)
    assert config["mcpServers"]["django"]["args"] == ["-m", "django_mcp.stdio", "--user", "alice"]
    assert_on_stderr(result.stderr.decode(), (noise.MCP_IMPORT_PRINT, noise.READY_LOG))
