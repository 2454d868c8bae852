"""
The example project that ``scripts/demo`` serves: migrated, loaded with its demo data, run by a
real daphne process, and used by the official ``mcp`` SDK client in both protocol eras.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from tests.live import ROOT, LiveServer, server_env


@pytest.fixture(scope="module")
def task_worker(example_env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """The task framework's database worker, as scripts/demo starts it beside the server."""
    worker = subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay",
                               "--interval", "0.1"], cwd=ROOT, env=server_env(example_env),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.kill()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_example_catalogue_over_mcp(example_server: LiveServer, mode: str) -> None:
    async def confirm(context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        return ElicitResult(action="accept", content={"confirm": True})

    async with asyncio.timeout(30), Client(example_server.mcp_url, mode=mode, elicitation_callback=confirm) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["query_models", "search_books", "lend_book", "check_shelves", "audit_books", "book_list",
                         "book_retrieve"]
        found = await client.call_tool("search_books", {"query": "calvino"})
        titles = [book["title"] for book in found.structured_content["result"]]
        assert titles == ["If on a winter's night a traveler", "Invisible Cities"]
        book_id = found.structured_content["result"][1]["id"]
        lent = await client.call_tool("lend_book", {"book_id": book_id})
        assert lent.content[0].text in ("Lent out: Invisible Cities.", "Invisible Cities is already lent out.")
        read = await client.read_resource(f"library://book/{book_id}")
        assert json.loads(read.contents[0].text)["available"] is False
        prompt = await client.get_prompt("recommend", {"author": "Italo Calvino"})
        assert "Italo Calvino" in prompt.messages[0].content.text


async def test_the_demo_writes_a_span_per_request_with_its_sql_inside(example_server: LiveServer,
                                                                     example_env: dict[str, str]) -> None:
    """scripts/demo's DEMO_TRACES: each MCP request an OpenTelemetry span, the ORM's queries its children."""
    import time
    from pathlib import Path

    async with asyncio.timeout(30), Client(example_server.mcp_url, mode="2026-07-28") as client:
        await client.call_tool("search_books", {"query": "calvino"})
    traces = Path(example_env["DEMO_TRACES"])
    deadline = time.monotonic() + 15

    def spans() -> list[dict[str, Any]]:
        text = traces.read_text() if traces.exists() else ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    while not any(span["name"] == "tools/call search_books" for span in spans()) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    call = next(span for span in spans() if span["name"] == "tools/call search_books")
    assert call["kind"] == "SpanKind.SERVER" and call["attributes"]["gen_ai.tool.name"] == "search_books"
    assert call["resource"]["attributes"]["service.name"] == "library"
    queries = [span for span in spans() if span["parent_id"] == call["context"]["span_id"]]
    assert any(span["attributes"].get("db.system", span["attributes"].get("db.system.name")) == "sqlite"
               for span in queries), queries


def test_each_request_writes_one_request_log_line_under_daphne(example_server: LiveServer) -> None:
    """
    The example's LOGGING keeps django_mcp.requests from propagating to the root handler daphne's
    command line installs: one line per request, the legacy initialize included.
    """
    import time
    import uuid

    from tests.transports.sse_client import request

    marker = f"once-{uuid.uuid4().hex[:12]}"
    reply = request(example_server, "POST", {"jsonrpc": "2.0", "id": marker, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "log-test", "version": "1"}}})
    assert reply.status == 200, reply.body
    deadline = time.monotonic() + 10
    while f"id={marker}" not in example_server.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a second copy of the line would follow at once
    lines = [line for line in example_server.log_text().splitlines() if f"id={marker}" in line]
    assert len(lines) == 1, lines
    assert "method=initialize" in lines[0] and "outcome=ok" in lines[0] and "version=2025-11-25" in lines[0]


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
        assert names == ["search_loan", "get_loan", "query_models", "search_books", "lend_book", "my_loans",
                         "return_book",
                         "check_shelves", "audit_books", "book_list", "book_retrieve", "book_put_back_on_shelf",
                         "books_by_year"]
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


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_sees_the_servers_identity(example_server: LiveServer, mode: str) -> None:
    """SERVER_TITLE, SERVER_DESCRIPTION and SERVER_ICONS of the example reach the SDK client's server_info."""
    async with asyncio.timeout(30), Client(example_server.mcp_url, mode=mode) as client:
        info = client.server_info
        assert info.name == "django-mcp-library" and info.title == "Library catalogue (django_mcp example)"
        assert info.description.startswith("The books, authors and loans of a small library")
        assert [(icon.mime_type, icon.sizes) for icon in info.icons] == [("image/svg+xml", ["64x64"])]
        assert str(info.icons[0].src).startswith("data:image/svg+xml;base64,")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_rest_apis_token_calls_tools_as_the_reader(example_server: LiveServer, mode: str) -> None:
    """django_mcp.drf.DRFAuthentication: the reader's DRF token (mcp_demo_data) works for MCP as for /api/."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    token = "reader-demo-api-token-000000000000000000"
    http = httpx2.AsyncClient(headers={"Authorization": f"Token {token}"})
    async with asyncio.timeout(30), http, Client(streamable_http_client(example_server.mcp_url, http_client=http),
                                                  mode=mode) as reader:
        loans = await reader.call_tool("my_loans", {})
        assert loans.structured_content["reader"] == "reader" and loans.structured_content["count"] >= 1
        api = await http.get(f"{example_server.url}/api/books/", params={"search": "kindred"})
        assert api.status_code == 200

    wrong = httpx2.AsyncClient(headers={"Authorization": "Token not-the-readers-token"})
    async with wrong:
        response = await wrong.post(example_server.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                    headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401 and response.json()["error"]["message"] == "Invalid token."


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_models_are_resources_and_loans_belong_to_their_reader(example_server: LiveServer, mode: str) -> None:
    """The demo's ModelResources: books page by page for anyone, loans only for their reader (or the librarian)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def every_uri(client: Client) -> list[str]:
        uris, cursor, pages = [], None, 0
        while True:
            page = await client.list_resources(cursor=cursor)
            pages += 1
            uris += [str(resource.uri) for resource in page.resources]
            if not (cursor := page.next_cursor):
                return uris, pages

    async with asyncio.timeout(30), Client(example_server.mcp_url, mode=mode) as anonymous:
        uris, pages = await every_uri(anonymous)
        books = [uri for uri in uris if uri.startswith("library://book/") and not uri.endswith("$schema")]
        assert len(books) == 247 and pages >= 3  # at least three pages at the default page size
        assert not [uri for uri in uris if uri.startswith("library://loan/")]
        book = json.loads((await anonymous.read_resource(books[0])).contents[0].text)
        assert book["author"].startswith("library://author/")

    for key, expected in (("reader-demo-key", 2), ("librarian-demo-key", 2)):
        http = httpx2.AsyncClient(headers={"X-Api-Key": key})
        async with asyncio.timeout(30), http, Client(streamable_http_client(example_server.mcp_url, http_client=http),
                                                      mode=mode) as client:
            loans = [uri for uri in (await every_uri(client))[0] if uri.startswith("library://loan/")
                     and not uri.endswith("$schema")]
            found = await client.call_tool("search_loan", {})
            assert len(found.structured_content["results"]) == len(loans) >= 1


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_tool_admin_showcase(example_server: LiveServer, mode: str) -> None:
    """A slow tool with progress, a DRF viewset action, an admin action and a query tool from the admin."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with asyncio.timeout(30), Client(example_server.mcp_url, mode=mode) as anonymous:
        names = [tool.name for tool in (await anonymous.list_tools()).tools]
        assert "book_list" in names and "books_by_year" not in names and "book_put_back_on_shelf" not in names
        checked = await anonymous.call_tool("check_shelves", {"pause": 0}, progress_callback=on_progress)
        assert checked.content[0].text.startswith("Checked ") and len(progress) > 3
        page = await anonymous.call_tool("book_list", {"search": "kindred"})
        assert [book["title"] for book in page.structured_content["results"]] == ["Kindred"]
        one = await anonymous.call_tool("book_retrieve", {"pk": page.structured_content["results"][0]["id"]})
        assert not one.is_error and one.structured_content["author"] == "Octavia E. Butler", one.content

    http = httpx2.AsyncClient(headers={"X-Api-Key": "librarian-demo-key"})
    async with asyncio.timeout(30), http, Client(streamable_http_client(example_server.mcp_url, http_client=http),
                                                  mode=mode) as librarian:
        early = await librarian.call_tool("books_by_year", {"published__gte": 1960, "published__lte": 1980})
        rows = early.structured_content["rows"]
        assert rows and all(1960 <= row["published"] <= 1980 for row in rows)
        back = await librarian.call_tool("book_put_back_on_shelf", {"filter": {"search": "Invisible Cities"}})
        assert not back.is_error, back.content


async def test_the_audit_runs_as_a_task_in_the_task_worker(example_server: LiveServer,
                                                           task_worker: subprocess.Popen[bytes]) -> None:
    """
    audit_books, called by a 2026-07-28 client that declares the tasks extension, answers with a
    task at once; the demo's task worker (django-tasks-db's db_worker) runs it; tasks/get follows
    it to the audit's report. Without the extension the same tool is an ordinary call.
    """
    import httpx2

    def body(method: str, params: dict[str, Any], extensions: bool) -> dict[str, Any]:
        capabilities = {"extensions": {"io.modelcontextprotocol/tasks": {}}} if extensions else {}
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "example-tests", "version": "1"}}
        return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}

    async def post(method: str, name: str, params: dict[str, Any], extensions: bool = True) -> dict[str, Any]:
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
                   "Mcp-Method": method, "Mcp-Name": name}
        response = await http.post(example_server.mcp_url, json=body(method, params, extensions), headers=headers)
        assert response.status_code == 200, response.text
        return response.json()["result"]

    async with asyncio.timeout(60), httpx2.AsyncClient() as http:
        created = await post("tools/call", "audit_books", {"name": "audit_books", "arguments": {"pause": 0.01}})
        assert created["resultType"] == "task" and created["status"] == "working"
        task_id = created["taskId"]
        while (task := await post("tasks/get", task_id, {"taskId": task_id}))["status"] == "working":
            await asyncio.sleep(0.2)
        assert task["status"] == "completed", task
        assert task["result"]["content"][0]["text"].startswith("Audited 247 books")
        plain = await post("tools/call", "audit_books", {"name": "audit_books", "arguments": {"pause": 0}},
                           extensions=False)
        assert plain["resultType"] == "complete" and plain["content"][0]["text"].startswith("Audited 247 books")
    assert task_worker.poll() is None


def test_the_example_projects_own_tests_pass_with_djangos_runner(tmp_path: Any) -> None:
    """
    ``manage.py test example_project.library``, as the example's developers run it: its tests
    (example_project/library/tests.py) drive the project's tools with django_mcp.test's client in
    Django's TestCase, in both eras.
    """
    env = server_env({"DJANGO_SETTINGS_MODULE": "example_project.settings",
                      "DEMO_SQLITE": str(tmp_path / "demo.sqlite3")})
    ran = subprocess.run([sys.executable, "manage.py", "test", "example_project.library", "-v", "2"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert "Ran 22 tests" in ran.stderr and "\nOK" in ran.stderr, ran.stderr[-2000:]
    assert "LegacySessionLibraryTests" in ran.stderr


def test_the_example_projects_tests_use_only_the_public_testing_api() -> None:
    import ast

    import django_mcp.test

    tree = ast.parse((ROOT / "example_project" / "library" / "tests.py").read_text())
    imported = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names if (node.module or "").startswith("django_mcp")}
    assert imported and all(module == "django_mcp.test" for module, _ in imported), imported
    assert {name for _, name in imported} <= set(django_mcp.test.__all__)


def test_the_example_projects_contracts_snapshot_is_current(tmp_path: Any) -> None:
    """
    example_project/mcp_contracts.json is what the catalogue serves (``manage.py mcp_contracts
    --check``): a change to its tools that is not in the committed snapshot fails here, as a model
    change without its migration fails ``makemigrations --check``.
    """
    env = server_env({"DJANGO_SETTINGS_MODULE": "example_project.settings",
                      "DEMO_SQLITE": str(tmp_path / "demo.sqlite3")})
    checked = subprocess.run([sys.executable, "manage.py", "mcp_contracts", "--check"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("No changes: what the sites serve matches"), checked.stdout


# query_models: ad-hoc questions over books, authors and loans (django_mcp.model_resources.query) --------

LOANS_PER_AUTHOR = {"model": "loan", "group_by": ["book__author__name"],
                    "aggregates": {"loans": {"function": "count"}}, "order_by": ["-loans", "book__author__name"]}


async def ask_query(server: LiveServer, key: str, mode: str, document: dict[str, Any]) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"X-Api-Key": key})
    async with asyncio.timeout(30), http, Client(streamable_http_client(server.mcp_url, http_client=http),
                                                  mode=mode) as client:
        return await client.call_tool("query_models", document)


async def own_loans(server: LiveServer, key: str) -> int:
    """How many loans a key's user sees through the loan resource's own search tool (not the query tool)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"X-Api-Key": key})
    async with asyncio.timeout(30), http, Client(streamable_http_client(server.mcp_url, http_client=http)) as client:
        return len((await client.call_tool("search_loan", {})).structured_content["results"])


#: The neighbour's loans (mcp_demo_data), which no other test lends or returns.
NEIGHBOURS = {"Bram Hollow": 2, "Cora Vance": 1}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_librarian_asks_loans_per_author(example_server: LiveServer, mode: str) -> None:
    result = await ask_query(example_server, "librarian-demo-key", mode, LOANS_PER_AUTHOR)
    assert not result.is_error, result.content[0].text
    rows = result.structured_content["rows"]
    counts = {row["book__author__name"]: row["loans"] for row in rows}
    assert {name: counts.get(name) for name in NEIGHBOURS} == NEIGHBOURS
    assert [row["loans"] for row in rows] == sorted(counts.values(), reverse=True)
    assert sum(counts.values()) == await own_loans(example_server, "librarian-demo-key")
    assert result.content[0].text.startswith("| book__author__name | loans |")


async def test_a_reader_sees_only_their_own_loans_through_any_relation(example_server: LiveServer) -> None:
    reader = "reader-demo-key"
    mine = (await ask_query(example_server, reader, "auto", LOANS_PER_AUTHOR)).structured_content["rows"]
    assert not {row["book__author__name"] for row in mine} & set(NEIGHBOURS)
    assert sum(row["loans"] for row in mine) == await own_loans(example_server, reader)
    # Authors whose books were lent, books with loans: the neighbour's are not there for the reader...
    lent = {"model": "author", "filter": {"books__loans__isnull": False}, "fields": ["name"], "order_by": ["name"]}
    names = [row["name"] for row in (await ask_query(example_server, reader, "auto", lent)).structured_content["rows"]]
    assert names == sorted(row["book__author__name"] for row in mine)
    counted = {"model": "book", "filter": {"loans__count__gt": 0}, "aggregates": {"books": {"function": "count"}}}
    assert (await ask_query(example_server, reader, "auto", counted)).structured_content["rows"] == [
        {"books": sum(row["loans"] for row in mine)}]
    # ...nor do their borrowers, however the question is put.
    borrowers = {"model": "loan", "aggregates": {"readers": {"function": "count", "field": "borrower",
                                                             "distinct": True}}}
    assert (await ask_query(example_server, reader, "auto", borrowers)).structured_content["rows"][0]["readers"] <= 1
    librarian = await ask_query(example_server, "librarian-demo-key", "auto", lent)
    assert set(NEIGHBOURS) <= {row["name"] for row in librarian.structured_content["rows"]}


async def test_anonymous_clients_query_the_public_catalogue_only(example_server: LiveServer) -> None:
    async with asyncio.timeout(30), Client(example_server.mcp_url, mode="2026-07-28") as client:
        books = await client.call_tool("query_models", {"model": "book", "filter": {"author__name": "Italo Calvino"},
                                                        "fields": ["title", "published"], "order_by": ["published"]})
        assert [row["title"] for row in books.structured_content["rows"]] == [
            "Invisible Cities", "If on a winter's night a traveler"]
        refused = await client.call_tool("query_models", {"model": "author", "filter": {"books__loans__isnull": False}})
        assert refused.is_error and refused.content[0].text == ("You may not read loan rows, so this query cannot "
                                                                "use them.")
