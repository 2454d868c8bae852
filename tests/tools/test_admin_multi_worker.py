"""
A staff member's switch on worker B reaches a client held by worker A: two daphne processes on
one PostgreSQL database and one ``channels_redis`` layer (the ``services`` fixture; skipped with its
reason when PostgreSQL on 127.0.0.1:5432 or Redis on 127.0.0.1:6379 is absent). Worker A also stops
serving the tool at once: the announcement drops its snapshot of the tool rows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping

import httpx2
import pytest
from mcp import MCPError

from tests.prompts.admin_browser import create_superuser
from tests.transports.workers import Workers, two_workers

from .admin_live import MODES, ToolStaff, change_reaches_client, connect, tool_names


@pytest.fixture(scope="module")
def workers(services: Mapping[str, str]) -> Iterator[Workers]:
    with two_workers({**services, "MCP_TEST_TOOL_ADMIN": "1"}, keepalive="2", prefix="tool-admin") as started:
        yield started


@pytest.fixture(scope="module")
def staff_on_b(workers: Workers) -> ToolStaff:
    create_superuser(workers.env, "tool-staff", "tool-pw")
    for worker in (workers.a, workers.b):  # each worker's first request makes the rows and reads them
        httpx2.post(worker.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}, headers={
            "accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list"})
    browser = ToolStaff(workers.b.url)
    browser.login("tool-staff", "tool-pw")
    return browser


@pytest.mark.parametrize("mode", MODES)
async def test_a_switch_on_worker_b_reaches_a_client_on_worker_a(workers: Workers, staff_on_b: ToolStaff,
                                                                  mode: str) -> None:
    print(workers.describe())
    try:
        names, latency = await change_reaches_client(
            workers.a.mcp_url, mode, staff_on_b, lambda: staff_on_b.change_tool("echo_async", enabled=False))
        assert "echo_async" not in names and "echo" in names
        async with connect(workers.a.mcp_url, mode) as client:
            with pytest.raises(MCPError, match="Unknown tool: echo_async"):
                await client.call_tool("echo_async", {"text": "hi"})
        print(f"list_changed across workers: {latency * 1000:.0f} ms after Save was pressed ({mode})")
        assert latency < 1.0
    finally:
        await asyncio.to_thread(staff_on_b.change_tool, "echo_async")
    async with connect(workers.a.mcp_url, mode) as client:
        assert "echo_async" in await tool_names(client)
