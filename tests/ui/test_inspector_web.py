"""
The example project's views in a host we did not write: the official MCP Inspector's web client
(``@modelcontextprotocol/inspector`` 2.12.0, installed by ``scripts/install-conformance`` into
``tools/inspector``), whose Apps tab renders a tool's view through its own sandbox proxy (a frame
on a second origin that writes the page into an inner frame, as the ext-apps specification's
"Sandbox proxy" describes), in Debian's Chromium.

The Inspector connects to the example server (2025-11-25, declaring the extension) as the demo's
reader; the test opens the book browser with a search, lends a book from the view — the Inspector
forwards the view's ``tools/call``, the server's own confirmation (``lend_book`` elicits when the
client can answer) comes up as the Inspector's elicitation dialog — and reads the answer in the
card; then it opens the reader's loans. Screenshots: ``.tmp/artifacts/app-view-inspector-*.png``.

Needs the Inspector and ``/usr/bin/chromium``; without them it skips, except under ``CI=true``
where it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import TIMEOUT_MS, require_browser
from tests.conftest import in_ci
from tests.live import ROOT, LiveServer, free_port
from tests.ui.app_host import async_chromium, screenshot_path


pytestmark = [pytest.mark.live, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

INSPECTOR = ROOT / "tools" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
#: The Inspector's web server prints its address, with the session's API token, when it is up.
UP = re.compile(r"(http://127\.0\.0\.1:\d+\?MCP_INSPECTOR_API_TOKEN=[0-9a-f]+)")
TEST_SECONDS = 120


@pytest.fixture(scope="module")
def inspector_url(example_server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Inspector's web client, its catalog holding the example server (as the demo's reader)."""
    if not INSPECTOR.exists():
        reason = "the MCP Inspector is not installed (run scripts/install-conformance; needs npm)"
        if in_ci():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason=reason)
    require_browser()
    home = tmp_path_factory.mktemp("inspector-web")
    catalog = home / "mcp.json"
    catalog.write_text(json.dumps({"mcpServers": {"library": {
        "type": "streamable-http", "url": example_server.mcp_url, "headers": {"X-Api-Key": "reader-demo-key"}}}}))
    env = {**os.environ, "HOME": str(home), "CLIENT_PORT": str(free_port()), "MCP_SANDBOX_PORT": str(free_port()),
           "MCP_INSPECTOR_SECRET_STORE": "memory", "PATH": f"{INSPECTOR.parent}{os.pathsep}{os.environ['PATH']}"}
    log = home / "inspector.log"
    with log.open("w") as output:
        process = subprocess.Popen([str(INSPECTOR), "--web", "--catalog", str(catalog)], cwd=home, env=env,
                                   stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = _wait_for_url(process, log)
        yield url
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)


def _wait_for_url(process: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> str:
    """The address the Inspector prints once its web server is up (it fails the test if it exits first)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = UP.search(log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"the Inspector's web client did not start:\n{log.read_text(errors='replace')[-3000:]}")


async def _open_app(page: Any, url: str, tool: str, query: str | None = None) -> Any:
    """Connect to the example server, open ``tool``'s app (with ``query``), return the view's frame locator."""
    await page.goto(url)
    await page.get_by_label('Connect or disconnect "library"').check(force=True)  # a switch drawn over its input
    await page.get_by_text("Connected", exact=True).wait_for()
    await page.get_by_text("Apps", exact=True).first.click()
    await page.get_by_role("button", name=tool).click()
    if query is not None:
        await page.get_by_role("textbox", name="Query").fill(query)
    # A tool with inputs gets a form and an Open App button; one without opens at once.
    opened = page.locator("iframe").or_(page.get_by_role("button", name="Open App"))
    await opened.first.wait_for()
    if await page.get_by_role("button", name="Open App").is_visible():
        await page.get_by_role("button", name="Open App").click()
    # The Inspector's sandbox proxy (another origin) holds the view's own frame.
    return page.frame_locator("iframe").frame_locator("iframe")


async def test_the_inspector_shows_the_book_browser_and_lends_from_it(inspector_url: str) -> None:
    async with asyncio.timeout(TEST_SECONDS), async_chromium() as browser:
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))  # the page's frames' too
        try:
            view = await _open_app(page, inspector_url, "search_books", "calvino")
            await view.locator("#status").filter(has_text="2 books").wait_for()
            card = view.locator(".book-card").filter(has_text="If on a winter's night a traveler")
            assert await card.locator(".availability").text_content() == "On the shelf"

            await card.locator("button.lend").click()
            await card.locator("button.confirm-yes").click()
            # lend_book asks the client too (elicitation): the Inspector's dialog, answered by the person.
            dialog = page.get_by_role("dialog")
            await dialog.get_by_text("Lend 'If on a winter's night a traveler' by Italo Calvino?").wait_for()
            await dialog.get_by_label("confirm").check()
            await dialog.get_by_role("button", name="Submit").click()
            await card.locator(".answer").filter(has_text="Lent out: If on a winter's night a traveler.").wait_for()
            await card.locator(".availability").filter(has_text="Lent out").wait_for()
            assert not errors, errors
        finally:
            await page.screenshot(path=str(screenshot_path("inspector-book_browser")), full_page=True)


async def test_the_inspector_shows_the_readers_loans(inspector_url: str) -> None:
    async with asyncio.timeout(TEST_SECONDS), async_chromium() as browser:
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        try:
            view = await _open_app(page, inspector_url, "my_loans")
            await view.locator("#reader").filter(has_text="Books lent to reader").wait_for()
            await view.locator(".loan").first.wait_for()
            count = await view.locator(".loan").count()
            assert count >= 2  # the demo data's two, and any the other test lent
            assert await view.locator("#loan-count").text_content() == f"({count})"
        finally:
            await page.screenshot(path=str(screenshot_path("inspector-loan_summary")), full_page=True)
