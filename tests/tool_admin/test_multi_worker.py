"""
A staff member's switch on worker B reaches a client held by worker A: two daphne processes on
one PostgreSQL database and one ``channels_redis`` layer (the ``services`` fixture; skipped with its
reason when PostgreSQL on 127.0.0.1:5432 or Redis on 127.0.0.1:6379 is absent). Worker A also stops
serving the tool at once: the announcement drops its snapshot of the tool rows.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator, Mapping

import httpx2
import pytest
from mcp import MCPError

from tests.live import ROOT, server_env
from tests.stored_prompts.admin_browser import create_superuser
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
        answer = httpx2.post(worker.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}}, headers={
            "accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list"})
        assert answer.status_code == 200 and "result" in answer.json(), answer.text
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


async def test_calls_on_both_workers_are_in_the_call_log(workers: Workers, staff_on_b: ToolStaff) -> None:
    """The batched log writes on PostgreSQL too, from every worker."""
    for worker in (workers.a, workers.b):
        async with connect(worker.mcp_url, "2026-07-28") as client:
            assert not (await client.call_tool("echo", {"text": f"logged on {worker.name}"})).is_error
    code = ("import django, time; django.setup(); from django_mcp.call_log.models import McpToolCall; "
            "deadline = time.time() + 5\n"
            "while McpToolCall.objects.filter(tool='echo', arguments__text__startswith='logged on').count() < 2 "
            "and time.time() < deadline: time.sleep(0.2)\n"
            "print(sorted(McpToolCall.objects.filter(tool='echo', arguments__text__startswith='logged on')"
            ".values_list('arguments__text', flat=True)))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(workers.env), timeout=60,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(sorted(f"logged on {w.name}" for w in (workers.a, workers.b)))
