"""
The tool admin over real HTTP with the official ``mcp`` SDK client in both eras: a staff member
disables a tool in the admin and a connected client is told and no longer sees it; a tool that
needs a permission is invisible to users without it; a rate-limited user gets a clear error; the
call log shows the calls (MCP spec 2025-11-25, server/tools, "List Changed Notification").
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from tests.live import ROOT, LiveServer, server_env
from tests.oauth.flow import create_user
from tests.stored_prompts.admin_browser import create_superuser

from .admin_live import MODES, ToolStaff, change_reaches_client, connect, tool_names


@pytest.fixture(scope="module")
def tool_env(sqlite_server_env: Mapping[str, str]) -> Mapping[str, str]:
    return {**sqlite_server_env, "MCP_TEST_TOOL_ADMIN": "1"}


@pytest.fixture(scope="module")
def tool_server(tool_env: Mapping[str, str]) -> Iterator[LiveServer]:
    with LiveServer(env=tool_env, name="tool-admin") as server:
        yield server


@pytest.fixture(scope="module")
def staff(tool_env: Mapping[str, str], tool_server: LiveServer) -> ToolStaff:
    create_superuser(tool_env, "tool-staff", "tool-pw")
    create_user(tool_env, "alice", "alice-pass-1")
    # The first MCP request of the worker makes the rows of the tools in code.
    answer = httpx2.post(tool_server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}, headers={
        "accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list"})
    # Checked: when this request was refused, the rows were only made by whichever test happened
    # to call first, and a test run alone found none.
    assert answer.status_code == 200 and "result" in answer.json(), answer.text
    browser = ToolStaff(tool_server.url)
    browser.login("tool-staff", "tool-pw")
    return browser


def keyed(url: str, mode: str, key: str) -> Client:
    """The SDK client as a user of the test API key (``X-Api-Key: <username>-key``)."""
    http = httpx2.AsyncClient(headers={"X-Api-Key": key}, timeout=20)
    return Client(streamable_http_client(url, http_client=http), mode=mode)


@pytest.mark.parametrize("mode", MODES)
async def test_disabling_a_tool_in_the_admin_reaches_a_connected_client(tool_server: LiveServer, staff: ToolStaff,
                                                                         mode: str) -> None:
    try:
        names, latency = await change_reaches_client(
            tool_server.mcp_url, mode, staff, lambda: staff.change_tool("echo_async", enabled=False))
        assert "echo_async" not in names and "echo" in names
        async with connect(tool_server.mcp_url, mode) as client:
            with pytest.raises(MCPError, match="Unknown tool: echo_async"):
                await client.call_tool("echo_async", {"text": "hi"})
        print(f"list_changed {latency * 1000:.0f} ms after Save was pressed ({mode})")
    finally:
        await asyncio.to_thread(staff.change_tool, "echo_async")
    async with connect(tool_server.mcp_url, mode) as client:
        assert "echo_async" in await tool_names(client)


def permission_id(env: Mapping[str, str], codename: str) -> int:
    code = ("import django; django.setup(); from django.contrib.auth.models import Permission; "
            f"print(Permission.objects.get(codename={codename!r}).pk)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), timeout=60,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_needing_a_permission_is_invisible_without_it(tool_server: LiveServer, staff: ToolStaff,
                                                                   tool_env: Mapping[str, str], mode: str) -> None:
    needed = permission_id(tool_env, "view_mcptoolcall")
    await asyncio.to_thread(staff.change_tool, "add_numbers", permissions=(needed,))
    try:
        async with asyncio.timeout(30):
            async with connect(tool_server.mcp_url, mode) as anonymous:
                assert "add_numbers" not in await tool_names(anonymous)
                with pytest.raises(MCPError, match="Unknown tool: add_numbers"):
                    await anonymous.call_tool("add_numbers", {"numbers": [1, 2]})
            async with keyed(tool_server.mcp_url, mode, "alice-key") as alice:
                assert "add_numbers" not in await tool_names(alice)
            async with keyed(tool_server.mcp_url, mode, "tool-staff-key") as superuser:
                assert "add_numbers" in await tool_names(superuser)
                assert not (await superuser.call_tool("add_numbers", {"numbers": [1, 2]})).is_error
    finally:
        await asyncio.to_thread(staff.change_tool, "add_numbers")


async def test_a_rate_limited_user_is_told_when_to_retry_and_the_call_log_shows_it(
        tool_server: LiveServer, staff: ToolStaff) -> None:
    await asyncio.to_thread(staff.change_tool, "echo", rate_limit="2/min")
    try:
        async with asyncio.timeout(30), keyed(tool_server.mcp_url, "2026-07-28", "alice-key") as alice:
            results = [await alice.call_tool("echo", {"text": f"call {n}"}) for n in range(3)]
    finally:
        await asyncio.to_thread(staff.change_tool, "echo")
    assert [result.is_error for result in results] == [False, False, True]
    assert "Rate limit reached for tool echo (2/min per user). Retry in" in results[2].content[0].text
    deadline = time.monotonic() + 5  # the log is written in batches, a fraction of a second later
    while True:
        status, _, page = await asyncio.to_thread(staff.open, "/admin/django_mcp_call_log/mcptoolcall/?tool=echo&q=alice")
        assert status == 200
        if page.count("rate-limited") >= 1 and page.count(">ok<") >= 2:
            break
        assert time.monotonic() < deadline, page[-3000:]
        await asyncio.sleep(0.3)
    assert "alice" in page
