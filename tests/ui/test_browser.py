"""
The example project's views in a real browser (issue 32): the host of ``tests/ui/app_host.py`` — the
official Python SDK's client, and a host page built on the App SDK's own ``AppBridge`` — loads each
view from the example server (``example_project.asgi`` under daphne, fresh SQLite and the demo
data, as ``scripts/demo`` serves it) into a sandboxed iframe on another origin in Debian's headless
Chromium, delivers the tool's input and result, and checks what the view renders and that its
buttons call tools through the host and show the answers. Each view's test runs in both eras
(2026-07-28, and 2025-11-25 with its initialize handshake) and keeps a screenshot of the host page
with the view, ``.tmp/artifacts/app-view-<view>-<era>.png``, even when it fails.

The CSP test checks the host's half of the views' security model (ext-apps "UI Resource Format",
Host Behavior): a view that declares no ``connectDomains`` cannot fetch from an origin, and the
same page under a policy that declares the origin can, so the test can tell a blocked request
from a broken one.

On a failure the exception carries what the host saw (the view's tool calls, console, page
errors). Needs ``/usr/bin/chromium`` (``scripts/install-browser``) and the host bundle
(``scripts/install-app-host``); without them these tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from tests.live import LiveServer
from tests.ui.app_host import AppHost, async_chromium, require_app_host, ui_extension


pytestmark = [pytest.mark.live, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

#: The client's mode (mcp.Client) and the era it must end up in; the era names the screenshot.
MODES = {"auto": "2026-07-28", "legacy": "2025-11-25"}
#: Per era, a search with one book on the shelf and one the demo data lends out, so both eras can
#: lend "their" book on the one server the module shares.
SEARCHES = {"auto": ("calvino", "Invisible Cities"), "legacy": ("butler", "Kindred")}
#: Per era, a book the reader borrows outside the view before pressing its Refresh button.
BORROWED = {"auto": "The Dispossessed", "legacy": "A Wizard of Earthsea"}
#: Long enough for a cold Chromium on a loaded CI machine.
TEST_SECONDS = 90


@pytest.fixture(scope="module", autouse=True)
def _app_host_first() -> None:
    """Skip (or fail under CI) before the example server starts (tests/ui/conftest.py) when no host can run."""
    require_app_host()


@asynccontextmanager
async def hosted(server: LiveServer, mode: str, api_key: str | None = None, *,
                 declares: bool = True) -> AsyncIterator[AppHost]:
    """
    A host that shows views, connected to ``server`` in ``mode`` (as the reader with ``api_key``),
    declaring the extension unless ``declares`` is False (as VS Code is reported to do).
    """
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    require_app_host()
    http = httpx2.AsyncClient(headers={"X-Api-Key": api_key} if api_key else {})
    async with http, Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode,
                            extensions=[ui_extension()] if declares else None) as client:
        assert client.protocol_version == MODES[mode], client.protocol_version
        async with async_chromium() as browser, AppHost(browser, client, era=MODES[mode]) as host:
            try:
                yield host
            except BaseException as error:
                # What the view did, as of the failure: its tool calls, console and errors.
                error.add_note(f"the host saw: {host.report()}")
                raise


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result.get("content") or [] if block.get("type") == "text")


@pytest.mark.parametrize("mode", list(MODES))
async def test_the_book_browser_shows_the_search_and_lends_through_the_host(example_server: LiveServer,
                                                                            mode: str) -> None:
    query, lent_title = SEARCHES[mode]
    async with asyncio.timeout(TEST_SECONDS), hosted(example_server, mode) as host:
        shown = None
        try:
            shown = await host.show("search_books", {"query": query})
            view = shown.locator
            books = shown.result["structuredContent"]["result"]
            assert shown.uri == "ui://default/search_books" and shown.csp is None
            assert shown.init["appInfo"]["name"] == "Book browser", shown.init

            # What the result says, one card per book.
            await view.locator("#status").filter(has_text=f"{len(books)} books").wait_for()
            assert await view.locator(".book-card").count() == len(books) == 2
            for book in books:
                card = view.locator(f'.book-card[data-book-id="{book["id"]}"]')
                assert await card.locator(".title").text_content() == book["title"]
                assert book["author"] in await card.locator(".author").text_content()
                expected = "On the shelf" if book["available"] else "Lent out"
                assert await card.locator(".availability").text_content() == expected
                assert await card.locator("button.lend").is_visible() == book["available"]
            [available] = [book for book in books if book["available"]]
            [lent] = [book for book in books if not book["available"]]
            assert lent["title"] == lent_title, books

            # Lend, then think better of it: the confirmation goes away and no tool is called.
            card = view.locator(f'.book-card[data-book-id="{available["id"]}"]')
            await card.locator("button.lend").click()
            await card.locator(".confirm").wait_for(state="visible")
            await card.locator("button.confirm-no").click()
            await card.locator(".confirm").wait_for(state="hidden")
            assert host.calls == []

            # Lend for real: lend_book through the host and the SDK client, the answer in the card.
            await card.locator("button.lend").click()
            await card.locator("button.confirm-yes").click()
            await card.locator(".answer").filter(has_text=f"Lent out: {available['title']}.").wait_for()
            await card.locator(".availability").filter(has_text="Lent out").wait_for()
            lend = host.calls[0]
            assert (lend.name, lend.arguments) == ("lend_book", {"book_id": available["id"]})
            assert text_of(lend.result) == f"Lent out: {available['title']}."
            assert not await card.locator("button.lend").is_visible()
            # The server agrees (its own resource, read by the host's client, not by the view).
            book = json.loads((await host.client.read_resource(f"library://book/{available['id']}")).contents[0].text)
            assert book["available"] is False, book

            # ... and the badge flipped from lend_book's own structured content: one call.
            assert lend.result["structuredContent"] == {"book_id": available["id"], "available": False}
            assert [(call.name, call.arguments) for call in host.calls] == [("lend_book", {"book_id": available["id"]})]

            # Details: the app-only tool book_details, through the host, its summary in the card.
            other = view.locator(f'.book-card[data-book-id="{lent["id"]}"]')
            before = len(host.calls)
            await other.locator("button.details").click()
            await other.locator(".details-text").wait_for(state="visible")
            details = host.calls[before]
            assert (details.name, details.arguments) == ("book_details", {"book_id": lent["id"]})
            assert details.refused is None and details.result["structuredContent"]["summary"]
            assert (await other.locator(".details-text").text_content()
                    == details.result["structuredContent"]["summary"])
            assert host.tools["book_details"]["_meta"]["ui"]["visibility"] == ["app"]
            assert all(call.refused is None for call in host.calls)
            # No script error, and nothing the page itself asked for was refused (by its CSP or else).
            assert not host.errors and not [line for line in host.console if line.startswith("error")]
        finally:
            if shown is not None:
                await host.screenshot(f"book_browser-{MODES[mode]}")


async def test_a_host_that_declares_nothing_shows_the_view_without_the_app_only_tool(
        example_server: LiveServer) -> None:
    """
    Every client gets the tools' view metadata, so a host that shows views without declaring the
    extension shows the book browser; the app-only book_details is not among its tools, so Details
    says it could not load, and Lend (lend_book, a model-visible tool) still lends and flips the
    card from lend_book's own result.
    """
    async with asyncio.timeout(TEST_SECONDS), hosted(example_server, "legacy", declares=False) as host:
        shown = None
        try:
            assert "book_details" not in host.tools
            shown = await host.show("search_books", {"query": "left hand of darkness"})  # no other test lends it
            view = shown.locator
            [available] = shown.result["structuredContent"]["result"]
            await view.locator("#status").filter(has_text="1 book").wait_for()
            card = view.locator(f'.book-card[data-book-id="{available["id"]}"]')

            await card.locator("button.details").click()
            await card.locator(".details-text.error").filter(has_text="Could not load the details").wait_for()

            await card.locator("button.lend").click()
            await card.locator("button.confirm-yes").click()
            await card.locator(".answer").filter(has_text=f"Lent out: {available['title']}.").wait_for()
            await card.locator(".availability").filter(has_text="Lent out").wait_for()
            assert [(call.name, call.refused is None) for call in host.calls] == [
                ("book_details", False), ("lend_book", True)]
            assert not host.errors
        finally:
            if shown is not None:
                await host.screenshot("book_browser-undeclared-host")


@pytest.mark.parametrize("mode", list(MODES))
async def test_the_loan_summary_shows_the_readers_loans_and_refreshes_through_the_host(
        example_server: LiveServer, mode: str) -> None:
    async with asyncio.timeout(TEST_SECONDS), hosted(example_server, mode, api_key="reader-demo-key") as host:
        shown = None
        try:
            shown = await host.show("my_loans", {})
            view = shown.locator
            summary = shown.result["structuredContent"]
            assert shown.uri == "ui://default/my_loans" and summary["reader"] == "reader"
            assert 1 <= summary["count"] == len(summary["loans"]), summary

            # Rendered for the user on the server (the template's user), the loans from the result.
            assert "reader" in await view.locator("#reader").text_content()
            await view.locator("#loan-count").filter(has_text=f"({summary['count']})").wait_for()
            assert await view.locator(".loan").count() == summary["count"]
            for loan in summary["loans"]:
                row = view.locator(f'.loan[data-book-id="{loan["book_id"]}"]')
                assert await row.locator(".title").text_content() == loan["title"]

            # The reader borrows another book elsewhere; Refresh asks my_loans again through the host.
            found = await host.client.call_tool("search_books", {"query": BORROWED[mode], "limit": 1})
            book_id = found.structured_content["result"][0]["id"]
            lent = await host.client.call_tool("lend_book", {"book_id": book_id})
            assert text_of(lent.model_dump(by_alias=True)) == f"Lent out: {BORROWED[mode]}."
            await view.locator("button.refresh").click()
            await view.locator("#loan-count").filter(has_text=f"({summary['count'] + 1})").wait_for()
            [refresh] = host.calls
            assert (refresh.name, refresh.arguments) == ("my_loans", {})
            assert refresh.result["structuredContent"]["count"] == summary["count"] + 1
            assert await view.locator(f'.loan[data-book-id="{book_id}"] .title').text_content() == BORROWED[mode]
            assert await view.locator(".loan").count() == summary["count"] + 1
            assert not host.errors and not [line for line in host.console if line.startswith("error")]
        finally:
            if shown is not None:
                await host.screenshot(f"loan_summary-{MODES[mode]}")


def sample_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a smoke call: each required one from its default or example, else a plain value."""
    schema = tool.get("inputSchema") or {}
    plain = {"string": "a", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
    arguments = {}
    for name in schema.get("required") or []:
        spec = (schema.get("properties") or {}).get(name) or {}
        if "default" in spec:
            arguments[name] = spec["default"]
        elif spec.get("examples"):
            arguments[name] = spec["examples"][0]
        else:
            arguments[name] = plain.get(spec.get("type"), "a")
    return arguments


async def test_every_view_of_the_demo_renders_in_the_host(example_server: LiveServer) -> None:
    """
    Every tool of the example project that names a view — those above, and any a newcomer adds
    with ``view=`` — is called with plain arguments, and its view shown by the host: it must
    connect, take the result and render without a script error. A screenshot of each is kept as
    ``.tmp/artifacts/app-view-demo-<tool>.png``.
    """
    async with asyncio.timeout(TEST_SECONDS), hosted(example_server, "auto", api_key="reader-demo-key") as host:
        with_views = sorted(name for name, tool in host.tools.items()
                            if ((tool.get("_meta") or {}).get("ui") or {}).get("resourceUri"))
    assert {"search_books", "my_loans"} <= set(with_views), with_views
    for name in with_views:  # one host page per view, as a host gives each result its own frame
        async with asyncio.timeout(TEST_SECONDS), hosted(example_server, "auto", api_key="reader-demo-key") as host:
            shown = await host.show(name, sample_arguments(host.tools[name]))
            try:
                assert shown.init["appInfo"]["name"], shown.init  # the page's App connected
                # Rendered once the result arrived: the page's body has visible text.
                await shown.locator.locator("body").filter(has_text=re.compile(r"\w")).wait_for()
                assert not host.errors, (name, host.errors)
                assert not [line for line in host.console if line.startswith("error")], (name, host.console)
            finally:
                await host.screenshot(f"demo-{name}")


FETCH = """async (url) => {
  const violations = [];
  document.addEventListener("securitypolicyviolation",
                            (event) => violations.push([event.effectiveDirective, event.blockedURI]));
  let outcome;
  try {
    // no-cors: the view's origin is opaque, so only the CSP can stop an opaque response coming back.
    const response = await fetch(url, {mode: "no-cors", cache: "no-store"});
    outcome = `fetched: ${response.type}`;
  } catch (error) {
    outcome = `failed: ${error.name}`;
  }
  await new Promise((resolve) => setTimeout(resolve, 200));  // violation events are queued as tasks
  return {outcome, violations};
}"""


async def test_a_view_cannot_reach_an_origin_it_did_not_declare(example_server: LiveServer) -> None:
    """
    search_books' view declares no csp, so its host allows it no connection (``connect-src
    'none'``): a ``fetch()`` from inside the view to the example server's own origin, or to an API
    elsewhere (``http://api.test``, answered by the host's routing), fails, Chromium reports the
    violation, and nothing reaches the API. The positive control is a host-side variation, since no
    example view declares ``connectDomains``: the same page under the policy a host builds for
    ``{"connectDomains": ["http://api.test"]}`` fetches from that API (an opaque no-cors response
    the API saw), and still not from the undeclared server.

    The declared origin is a routed one, not the live server's: Chromium's Local Network Access
    checks refuse a page on a non-loopback origin any request to 127.0.0.1 whatever its CSP says, so
    a fetch to the server could never succeed and would not tell the CSP apart.
    """
    server = f"{example_server.url}/api/books/"
    api_origin = "http://api.test"
    api = f"{api_origin}/books"
    async with asyncio.timeout(TEST_SECONDS), hosted(example_server, "auto") as host:
        reached = await host.serve_origin(api_origin)
        shown = await host.show("search_books", {"query": "calvino"})
        await shown.locator.locator("#status").filter(has_text="2 books").wait_for()
        assert shown.csp is None and "connect-src 'none'" in shown.csp_header
        # The frame is sandboxed without allow-same-origin: an opaque origin that cannot touch the host.
        isolation = await shown.frame.evaluate(
            "() => [self.origin, (() => { try { return parent.document.title; } catch (e) { return e.name; } })()]")
        assert isolation == ["null", "SecurityError"], isolation
        to_server = await shown.frame.evaluate(FETCH, server)
        to_api = await shown.frame.evaluate(FETCH, api)
        await host.screenshot("csp-undeclared-origin")
        for target, blocked in ((server, to_server), (api, to_api)):
            expected = {"outcome": "failed: TypeError", "violations": [["connect-src", target]]}
            assert blocked == expected, (target, blocked)
        assert reached == [], reached
        # And the view has no way around the bridge: the host's Python binding, which Playwright
        # installs in every frame, answers the host page only.
        direct = await shown.frame.evaluate("() => window.hostCallTool({name: 'lend_book', arguments: {book_id: 1}})"
                                            ".then(() => 'called', () => 'refused')")
        assert direct == "refused" and host.calls == []
        refusals = [line for line in host.console if "violates the following Content Security Policy" in line]
        assert len(refusals) == 2 and all("connect-src 'none'" in line for line in refusals)

    async with asyncio.timeout(TEST_SECONDS), hosted(example_server, "auto") as host:
        reached = await host.serve_origin(api_origin)
        shown = await host.show("search_books", {"query": "calvino"}, csp={"connectDomains": [api_origin]})
        await shown.locator.locator("#status").filter(has_text="2 books").wait_for()
        assert f"connect-src {api_origin};" in shown.csp_header
        allowed = await shown.frame.evaluate(FETCH, api)
        assert allowed == {"outcome": "fetched: opaque", "violations": []}, allowed
        assert reached == [api], reached
        still_blocked = await shown.frame.evaluate(FETCH, server)
        assert still_blocked == {"outcome": "failed: TypeError", "violations": [["connect-src", server]]}, still_blocked
        await host.screenshot("csp-declared-origin")
