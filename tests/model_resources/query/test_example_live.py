"""
The example project's query tool over real sockets (daphne, the official SDK client): the
librarian asks "loans per author"; the reader asks the same questions and, through every relation,
sees their own loans only.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client

from tests.live import LiveServer

LOANS_PER_AUTHOR = {"model": "loan", "group_by": ["book__author__name"],
                    "aggregates": {"loans": {"function": "count"}}, "order_by": ["-loans", "book__author__name"]}


async def ask(server: LiveServer, key: str, mode: str, document: dict[str, Any]) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"X-Api-Key": key})
    async with asyncio.timeout(30), http, Client(streamable_http_client(server.mcp_url, http_client=http),
                                                  mode=mode) as client:
        return await client.call_tool("query_models", document)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_librarian_asks_loans_per_author(example_server: LiveServer, mode: str) -> None:
    result = await ask(example_server, "librarian-demo-key", mode, LOANS_PER_AUTHOR)
    assert not result.is_error, result.content[0].text
    rows = result.structured_content["rows"]
    # The demo's loans: the reader's two (Butler, Calvino) and the neighbour's three (Hollow ×2, Vance).
    assert rows == [{"book__author__name": "Bram Hollow", "loans": 2},
                    {"book__author__name": "Cora Vance", "loans": 1},
                    {"book__author__name": "Italo Calvino", "loans": 1},
                    {"book__author__name": "Octavia E. Butler", "loans": 1}]
    assert result.content[0].text.startswith("| book__author__name | loans |")


async def test_a_reader_sees_only_their_own_loans_through_any_relation(example_server: LiveServer) -> None:
    reader = "reader-demo-key"
    mine = await ask(example_server, reader, "auto", LOANS_PER_AUTHOR)
    assert mine.structured_content["rows"] == [{"book__author__name": "Italo Calvino", "loans": 1},
                                               {"book__author__name": "Octavia E. Butler", "loans": 1}]
    # Authors whose books were lent: the neighbour's loans are not there for the reader...
    lent = {"model": "author", "filter": {"books__loans__isnull": False}, "fields": ["name"], "order_by": ["name"]}
    assert [row["name"] for row in (await ask(example_server, reader, "auto", lent)).structured_content["rows"]] \
        == ["Italo Calvino", "Octavia E. Butler"]
    counted = {"model": "book", "filter": {"loans__count__gt": 0}, "fields": ["title"], "order_by": ["title"]}
    assert [row["title"] for row in (await ask(example_server, reader, "auto", counted)).structured_content["rows"]] \
        == ["Invisible Cities", "Kindred"]
    # ...nor do their borrowers, however the question is put.
    borrowers = {"model": "loan", "aggregates": {"readers": {"function": "count", "field": "borrower",
                                                             "distinct": True}}}
    assert (await ask(example_server, reader, "auto", borrowers)).structured_content["rows"] == [{"readers": 1}]
    librarian = await ask(example_server, "librarian-demo-key", "auto", lent)
    assert "Bram Hollow" in [row["name"] for row in librarian.structured_content["rows"]]


async def test_anonymous_clients_query_the_public_catalogue_only(example_server: LiveServer) -> None:
    async with asyncio.timeout(30), Client(example_server.mcp_url, mode="2026-07-28") as client:
        books = await client.call_tool("query_models", {"model": "book", "filter": {"author__name": "Italo Calvino"},
                                                        "fields": ["title", "published"], "order_by": ["published"]})
        assert [row["title"] for row in books.structured_content["rows"]] == [
            "Invisible Cities", "If on a winter's night a traveler"]
        refused = await client.call_tool("query_models", {"model": "author", "filter": {"books__loans__isnull": False}})
        assert refused.is_error and refused.content[0].text == ("You may not read loan rows, so this query cannot "
                                                                "use them.")
