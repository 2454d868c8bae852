"""
The example project's views (``search_books``' book browser, ``my_loans``' loan summary) served by
a real daphne and stdio process to the official ``mcp`` SDK client, on every transport: Streamable
HTTP in both eras, HTTP+SSE, and stdio.

A client that declares the MCP Apps extension (``io.modelcontextprotocol/ui`` with the view MIME
type; the SDK's ``advertise``) finds each tool's view, the app-only ``book_details``, and the views
on the first page of ``resources/list``; reads a page rendered for its user with the App SDK
inline; and the view of a tool it may not use is "not found". A client that does not declare it
gets the same complete results and view metadata, and no app-only tool. The MCP Inspector's CLI
(2.12.0) probes the views as a third-party client. The pages' behaviour in a browser is
tests/ui/test_browser.py's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.extension import advertise
from mcp.client.sse import sse_client

from django_mcp.ui.constants import EXTENSION, MIME_TYPE
from tests.conftest import in_ci
from tests.live import ROOT, LiveServer, server_env


pytestmark = pytest.mark.live

TIMEOUT = 30
SHOWS_VIEWS = advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})
BROWSER, LOANS = "ui://default/search_books", "ui://default/my_loans"
#: The transports and eras: Streamable HTTP 2026-07-28 and 2025-11-25, HTTP+SSE (2024-11-05's
#: transport; the SDK negotiates its newest legacy revision on it), stdio.
TRANSPORTS = ["2026-07-28", "legacy", "http+sse", "stdio"]


@asynccontextmanager
async def connected(server: LiveServer, env: dict[str, str], transport: str, *, key: str | None = None,
                    views: bool = True) -> AsyncIterator[Client]:
    """An SDK client over ``transport``, as the reader (``key``) or anonymous, declaring the extension or not."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    extensions = [SHOWS_VIEWS] if views else None
    headers = {"X-Api-Key": key} if key else {}
    if transport == "stdio":
        # stdio has no API key: the user is named on the command line, as Claude Desktop's config would.
        user = ["--user", "reader"] if key else []
        params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_stdio", *user],
                                       env=server_env(env), cwd=str(ROOT))
        async with Client(params, mode="legacy", extensions=extensions) as client:
            yield client
    elif transport == "http+sse":
        async with Client(sse_client(f"{server.url}/sse", headers=headers), mode="legacy",
                          extensions=extensions) as client:
            yield client
    else:
        mode = "2026-07-28" if transport == "2026-07-28" else "legacy"
        async with httpx2.AsyncClient(headers=headers) as http, Client(
                streamable_http_client(server.mcp_url, http_client=http), mode=mode, extensions=extensions) as client:
            yield client


def tools_by_name(listing: Any) -> dict[str, Any]:
    return {tool.name: tool for tool in listing.tools}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_client_that_shows_views_finds_and_reads_them(example_server: LiveServer, example_env: dict[str, str],
                                                              transport: str) -> None:
    async with asyncio.timeout(TIMEOUT), connected(example_server, example_env, transport,
                                                   key="reader-demo-key") as client:
        tools = tools_by_name(await client.list_tools())
        assert tools["search_books"].meta["ui"] == {"resourceUri": BROWSER}
        assert tools["search_books"].meta["ui/resourceUri"] == BROWSER  # the key older hosts read
        assert tools["my_loans"].meta["ui"] == {"resourceUri": LOANS}
        assert tools["book_details"].meta["ui"] == {"visibility": ["app"]}  # the host keeps it from the model
        assert tools["lend_book"].meta is None

        # Both views on the first page, before the 247 books: hosts prefetch views from the listing.
        first_page = {str(resource.uri): resource for resource in (await client.list_resources()).resources}
        assert first_page[BROWSER].mime_type == first_page[LOANS].mime_type == MIME_TYPE

        page = (await client.read_resource(BROWSER)).contents[0]
        assert page.mime_type == MIME_TYPE
        assert "globalThis.McpApps=" in page.text and 'callServerTool({name: "lend_book"' in page.text
        assert "Books lent to reader" in (await client.read_resource(LOANS)).contents[0].text  # rendered for the user

        # What the views' buttons call through the host.
        details = await client.call_tool("book_details", {"book_id": 1})
        assert details.structured_content["title"] == "A Wizard of Earthsea" and details.structured_content["summary"]
        loans = await client.call_tool("my_loans", {})
        assert loans.structured_content["reader"] == "reader"
        assert loans.structured_content["count"] == len(loans.structured_content["loans"]) == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_client_that_declares_no_views_gets_complete_results_and_no_app_only_tool(
        example_server: LiveServer, example_env: dict[str, str], transport: str) -> None:
    async with asyncio.timeout(TIMEOUT), connected(example_server, example_env, transport, key="reader-demo-key",
                                                   views=False) as client:
        tools = tools_by_name(await client.list_tools())
        assert "book_details" not in tools
        assert tools["search_books"].meta["ui"] == {"resourceUri": BROWSER}  # inert without views
        found = await client.call_tool("search_books", {"query": "calvino"})
        assert [book["title"] for book in found.structured_content["result"]] == [
            "If on a winter's night a traveler", "Invisible Cities"]
        assert "Invisible Cities" in found.content[0].text  # the text a model reads is complete too
        with pytest.raises(MCPError, match="Unknown tool: book_details"):  # as if it did not exist
            await client.call_tool("book_details", {"book_id": 1})


@pytest.mark.parametrize("transport", ["2026-07-28", "legacy", "http+sse"])
async def test_the_view_of_a_tool_the_user_may_not_use_is_not_found(
        example_server: LiveServer, example_env: dict[str, str], transport: str) -> None:
    """my_loans is for signed-in readers: an anonymous client has neither the tool nor its view."""
    async with asyncio.timeout(TIMEOUT), connected(example_server, example_env, transport) as anonymous:
        tools = tools_by_name(await anonymous.list_tools())
        assert "my_loans" not in tools and tools["search_books"].meta["ui"] == {"resourceUri": BROWSER}
        listed = {str(resource.uri) for resource in (await anonymous.list_resources()).resources}
        assert BROWSER in listed and LOANS not in listed
        with pytest.raises(MCPError) as missing:
            await anonymous.read_resource(LOANS)
        assert "not found" in str(missing.value).lower()


INSPECTOR = ROOT / "tools" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_mcp_inspector_finds_the_views(example_server: LiveServer, era: str, tmp_path: Any) -> None:
    """``--app-info`` probes each tool's view (its resourceUri and the resource's MIME type)."""
    if not INSPECTOR.exists():
        reason = "the MCP Inspector is not installed (run scripts/install-conformance; needs npm)"
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason=reason)

    def probe(*arguments: str) -> dict[str, dict[str, Any]]:
        # The Inspector keeps a catalog under HOME: a folder of the test's own.
        env = {**os.environ, "HOME": str(tmp_path), "PATH": f"{INSPECTOR.parent}{os.pathsep}{os.environ['PATH']}"}
        done = subprocess.run([str(INSPECTOR), "--cli", example_server.mcp_url, "--protocol-era", era,
                               "--method", "tools/list", "--app-info", *arguments],
                              capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return {line["toolName"]: line for line in lines}

    advertised = probe("--advertise-apps")  # it declares the extension at initialize (and per request)
    assert advertised["search_books"] == {"hasApp": True, "toolName": "search_books", "resourceUri": BROWSER,
                                          "resourceMimeType": MIME_TYPE}
    assert advertised["book_details"]["hasApp"] is False  # listed: an app-only tool, for its host to keep
    plain = probe()  # by default it does not: the views still, no app-only tool
    assert plain["search_books"]["hasApp"] is True and "book_details" not in plain
