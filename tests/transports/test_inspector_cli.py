"""
The official MCP Inspector (``@modelcontextprotocol/inspector`` 2.12.0, installed by
``scripts/install-conformance`` into ``tools/inspector``) driving a live daphne server from its
CLI, in both protocol eras: ``legacy`` (initialize + session) and ``modern`` (2026-07-28).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import in_ci
from tests.live import ROOT


INSPECTOR = ROOT / "tools" / "inspector" / "node_modules" / ".bin"
ERAS = ["legacy", "modern"]


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Run the Inspector CLI; it writes a catalog under HOME, so HOME is a temp folder."""
    if not (INSPECTOR / "mcp-inspector").exists():
        reason = "the MCP Inspector is not installed (run scripts/install-conformance; needs npm)"
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason=reason)
    home = tmp_path_factory.mktemp("inspector-home")

    def run(url: str, era: str, *arguments: str) -> tuple[int, Any]:
        env = {**os.environ, "HOME": str(home), "PATH": f"{INSPECTOR}{os.pathsep}{os.environ['PATH']}"}
        completed = subprocess.run(
            [str(INSPECTOR / "mcp-inspector"), "--cli", url, "--protocol-era", era, *arguments,
             "--format", "json", "-q"],
            capture_output=True, text=True, timeout=60, env=env, cwd=Path(home),
        )
        output = completed.stdout.strip().splitlines()
        return completed.returncode, json.loads(output[-1]) if output else completed.stderr

    return run


@pytest.mark.parametrize("era", ERAS)
def test_inspector_lists_and_calls_tools(inspector: Any, live_server_mcp: Any, era: str) -> None:
    status, listed = inspector(live_server_mcp.mcp_url, era, "--method", "tools/list")
    assert status == 0, listed
    assert {"echo", "add_numbers", "slow_steps"} <= {tool["name"] for tool in listed["result"]["tools"]}
    status, called = inspector(live_server_mcp.mcp_url, era, "--method", "tools/call", "--tool-name", "echo",
                               "--tool-arg", "text=hello", "times=2")
    assert status == 0, called
    assert called["result"]["content"] == [{"type": "text", "text": "hello hello"}]


@pytest.mark.parametrize("era", ERAS)
def test_inspector_reads_resources_and_gets_prompts(inspector: Any, live_server_mcp: Any, era: str) -> None:
    status, read = inspector(live_server_mcp.mcp_url, era, "--method", "resources/read", "--uri", "memo://items/7")
    assert status == 0, read
    assert json.loads(read["result"]["contents"][0]["text"]) == {"id": "7", "name": "Item 7"}
    status, prompt = inspector(live_server_mcp.mcp_url, era, "--method", "prompts/get", "--prompt-name", "summarize",
                               "--prompt-args", "topic=tides", "style=detailed")
    assert status == 0, prompt
    assert prompt["result"]["messages"][0]["content"]["text"] == "Write a detailed summary of tides."


def test_inspector_sends_mirrored_param_headers_in_the_modern_era(inspector: Any, live_server_mcp: Any) -> None:
    """2026-07-28: the Inspector mirrors x-mcp-header arguments as Mcp-Param-*; the server accepts them."""
    status, called = inspector(live_server_mcp.mcp_url, "modern", "--method", "tools/call",
                               "--tool-name", "test_x_mcp_header", "--tool-arg", "region=eu-west")
    assert status == 0, called
    assert called["result"]["content"][0]["text"] == "Region: eu-west"


@pytest.mark.parametrize("era", ERAS)
def test_inspector_reports_an_unknown_tool(inspector: Any, live_server_mcp: Any, era: str) -> None:
    status, output = inspector(live_server_mcp.mcp_url, era, "--method", "tools/call", "--tool-name", "no_such_tool")
    assert status != 0, output
