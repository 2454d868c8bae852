"""
The example project's prompts (top-level ``templates/mcp/prompts/`` and the database prompt the
demo data creates), served by a real daphne process to the ``mcp`` SDK client.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator

import mcp_types as types
import pytest
from mcp import Client

from tests.live import ROOT, LiveServer, migrate, server_env


@pytest.fixture(scope="module")
def example_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    env = {"DJANGO_SETTINGS_MODULE": "example_project.settings",
           "DEMO_SQLITE": str(tmp_path_factory.mktemp("demo-prompts") / "demo.sqlite3")}
    migrate(env)
    subprocess.run([sys.executable, "manage.py", "mcp_demo_data"], cwd=ROOT, env=server_env(env),
                   capture_output=True, text=True, timeout=60, check=True)
    with LiveServer("example_project.asgi:application", env=env, name="example-prompts") as server:
        yield server


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_example_prompts(example_server: LiveServer, mode: str) -> None:
    async with asyncio.timeout(30), Client(example_server.mcp_url, mode=mode) as client:
        listed = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        assert {"recommend", "ask_librarian", "plan_reading", "review_book"} <= set(listed)
        assert listed["review_book"].title == "Review a book"
        books = await client.complete(types.PromptReference(type="ref/prompt", name="review_book"),
                                      {"name": "book", "value": ""})
        assert books.completion.values and all(value.isdigit() for value in books.completion.values)
        book = books.completion.values[0]
        review = await client.get_prompt("review_book", {"book": book, "tone": "critical", "language": "fr"})
        embedded, ask = review.messages
        assert isinstance(embedded.content, types.EmbeddedResource)
        assert str(embedded.content.resource.uri) == f"library://book/{book}"
        assert '"title"' in embedded.content.resource.text
        assert "Write a critical review" in ask.content.text and "French" in ask.content.text
        plan = await client.get_prompt("plan_reading", {"weeks": "3"})
        assert [m.role for m in plan.messages] == ["user", "assistant"]
        assert "a guest of the library" in plan.messages[0].content.text
        assert "3-week reading plan" in plan.messages[0].content.text
        asked = await client.get_prompt("ask_librarian", {"question": "Any Le Guin in?"})
        assert "Any Le Guin in?" in asked.messages[0].content.text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_plan_reading_embeds_the_readers_loans_with_their_permissions(example_server: LiveServer,
                                                                            mode: str) -> None:
    """The reader's loans are embedded as library://loan resources, read as the reader (the demo's reader key)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"X-Api-Key": "reader-demo-key"})
    async with asyncio.timeout(30), http, Client(streamable_http_client(example_server.mcp_url, http_client=http),
                                                  mode=mode) as client:
        plan = await client.get_prompt("plan_reading", {"interests": "islands"})
    assert "reader, a library member" in plan.messages[0].content.text
    loans = [m.content.resource for m in plan.messages if isinstance(m.content, types.EmbeddedResource)]
    assert loans and all(str(loan.uri).startswith("library://loan/") for loan in loans)
    assert all(json.loads(loan.text)["borrower"] for loan in loans)
    assert "4-week reading plan around islands" in plan.messages[-2].content.text
    assert plan.messages[-1].role == "assistant"
