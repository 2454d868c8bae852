"""
The example project that ``scripts/demo`` serves: migrated, loaded with its demo data, run by a
real daphne process, and used by the official ``mcp`` SDK client in both protocol eras.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from tests.live import ROOT, LiveServer, migrate, server_env


@pytest.fixture(scope="module")
def example_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    env = {"DJANGO_SETTINGS_MODULE": "example_project.settings",
           "DEMO_SQLITE": str(tmp_path_factory.mktemp("demo") / "demo.sqlite3")}
    migrate(env)
    loaded = subprocess.run([sys.executable, "manage.py", "mcp_demo_data"], cwd=ROOT, env=server_env(env),
                            capture_output=True, text=True, timeout=60, check=True)
    assert "Demo data ready: 3 authors, 7 books" in loaded.stdout and "the librarian" in loaded.stdout
    with LiveServer("example_project.asgi:application", env=env, name="example") as server:
        yield server


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_example_catalogue_over_mcp(example_server: LiveServer, mode: str) -> None:
    async def confirm(context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        return ElicitResult(action="accept", content={"confirm": True})

    async with asyncio.timeout(30), Client(example_server.mcp_url, mode=mode, elicitation_callback=confirm) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["search_books", "lend_book"]
        found = await client.call_tool("search_books", {"query": "calvino"})
        titles = [book["title"] for book in found.structured_content["result"]]
        assert titles == ["If on a winter's night a traveler", "Invisible Cities"]
        book_id = found.structured_content["result"][1]["id"]
        lent = await client.call_tool("lend_book", {"book_id": book_id})
        assert lent.content[0].text in ("Lent out: Invisible Cities.", "Invisible Cities is already lent out.")
        read = await client.read_resource(f"library://books/{book_id}")
        assert '"available": false' in read.contents[0].text
        prompt = await client.get_prompt("recommend", {"author": "Italo Calvino"})
        assert "Italo Calvino" in prompt.messages[0].content.text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_librarian_key_reveals_the_guarded_tool(example_server: LiveServer, mode: str) -> None:
    """Permission classes hide return_book from anonymous clients; the demo API key authenticates the librarian."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with asyncio.timeout(30), Client(example_server.mcp_url, mode=mode) as anonymous:
        assert "return_book" not in [tool.name for tool in (await anonymous.list_tools()).tools]

    http = httpx2.AsyncClient(headers={"X-Api-Key": "librarian-demo-key"})
    async with asyncio.timeout(30), http, Client(streamable_http_client(example_server.mcp_url, http_client=http),
                                                  mode=mode) as librarian:
        names = [tool.name for tool in (await librarian.list_tools()).tools]
        assert names == ["search_books", "lend_book", "return_book"]
        found = await librarian.call_tool("search_books", {"query": "kindred"})
        book_id = found.structured_content["result"][0]["id"]
        await librarian.call_tool("lend_book", {"book_id": book_id})
        returned = await librarian.call_tool("return_book", {"book_id": book_id})
        assert returned.content[0].text == f"Returned book {book_id}; librarian put it back on the shelf."

    wrong = httpx2.AsyncClient(headers={"X-Api-Key": "not-a-key"})
    async with wrong:
        response = await wrong.post(example_server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                    headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'ApiKey realm="library", header="X-Api-Key"'
    assert response.json()["error"]["message"] == "Unknown API key"
