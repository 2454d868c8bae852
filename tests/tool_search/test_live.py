"""
Tool search on a real daphne server with the official SDK client, in both eras: the short
listing, a search, and the found tool called directly and through call_tool, for a user who may
see the payroll tools and one who may not.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live import ROOT, LiveServer, server_env

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def server(sqlite_server_env: Mapping[str, str]) -> Iterator[LiveServer]:
    env = {**sqlite_server_env, "MCP_TEST_SITE": "tests.tool_search.sites.search_site"}
    subprocess.run([sys.executable, "-m", "tests.tool_search.setup"], cwd=ROOT, env=server_env(env),
                   capture_output=True, text=True, timeout=60, check=True)
    with LiveServer(env=env, name="tool-search") as live:
        yield live


async def session(server: LiveServer, user: str, mode: str, work: Any) -> Any:
    http = httpx2.AsyncClient(headers={"X-Api-Key": f"tool_search_{user}-key"})
    async with asyncio.timeout(30), http, Client(streamable_http_client(server.mcp_url, http_client=http),
                                                  mode=mode) as client:
        return await work(client)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_list_search_and_call_as_each_user(server: LiveServer, mode: str) -> None:
    async def work(client: Client) -> dict[str, Any]:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        searched = await client.call_tool("search_tools", {"query": "payroll salaries", "limit": 3})
        names = [tool["name"] for tool in searched.structured_content["tools"]]
        direct = await client.call_tool(names[0], {"id": 1}) if names else None
        proxied = await client.call_tool("call_tool", {"name": "delete_payroll", "arguments": {"id": 1}})
        return {"listed": listed, "names": names, "direct": direct, "proxied": proxied}

    boss = await session(server, "boss", mode, work)
    assert boss["listed"] == ["get_book", "summarize_payroll", "search_tools", "call_tool"]
    assert len(boss["names"]) == 3 and all(name.endswith(("payroll", "payrolls")) for name in boss["names"])
    assert not boss["direct"].is_error and boss["direct"].content[0].text == f"{boss['names'][0]} ran with ['id']"
    assert boss["proxied"].content[0].text == "delete_payroll ran with ['id']"

    clerk = await session(server, "clerk", mode, work)
    assert clerk["listed"] == ["get_book", "search_tools", "call_tool"]
    assert clerk["names"] == [] and clerk["direct"] is None
    assert clerk["proxied"].is_error
    assert clerk["proxied"].content[0].text == "Unknown tool: delete_payroll. Use search_tools to find one."


async def test_a_found_tool_is_called_directly_without_being_listed(server: LiveServer) -> None:
    async def work(client: Client) -> Any:
        found = await client.call_tool("search_tools", {"query": "archive a vehicle of the fleet", "limit": 1})
        tool = found.structured_content["tools"][0]
        assert tool["name"] == "archive_vehicle" and tool["inputSchema"]["properties"]["id"]["type"] == "integer"
        return await client.call_tool(tool["name"], {"id": 7})

    result = await session(server, "clerk", "2026-07-28", work)
    assert not result.is_error and result.content[0].text == "archive_vehicle ran with ['id']"


@pytest.fixture(scope="module")
def example_with_search(example_env: dict[str, str]) -> Iterator[LiveServer]:
    """The example project as ``DEMO_TOOL_SEARCH=1 scripts/demo`` serves it."""
    with LiveServer("example_project.asgi:application", env={**example_env, "DEMO_TOOL_SEARCH": "1"},
                    name="example-tool-search") as live:
        yield live


async def example_session(server: LiveServer, key: str, work: Any) -> Any:
    http = httpx2.AsyncClient(headers={"X-Api-Key": key})
    async with asyncio.timeout(30), http, Client(streamable_http_client(server.mcp_url, http_client=http),
                                                  mode="legacy") as client:
        return await work(client)


async def test_the_demo_with_tool_search(example_with_search: LiveServer) -> None:
    async def work(client: Client) -> dict[str, Any]:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        found = await client.call_tool("search_tools", {"query": "put a book back on the shelf", "limit": 3})
        return {"listed": listed, "found": [tool["name"] for tool in found.structured_content["tools"]]}

    librarian = await example_session(example_with_search, "librarian-demo-key", work)
    reader = await example_session(example_with_search, "reader-demo-key", work)
    assert librarian["listed"] == reader["listed"] == ["search_books", "lend_book", "query_models", "search_tools",
                                                      "call_tool"]
    assert librarian["found"][0] == "book_put_back_on_shelf"  # the admin action, for staff only
    assert "book_put_back_on_shelf" not in reader["found"]
