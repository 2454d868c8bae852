"""
The admin styled by the server's own static files (``django_mcp.asgi``): the example project that
``scripts/demo`` serves, under a real daphne (``example_project.asgi:application``) with ``DEBUG`` on
as the demo has it, in Debian's Chromium driven by Playwright's client.

daphne serves no static files by itself; ``django_mcp.asgi.application()`` serves them as
``runserver`` does. Here the demo's staff user logs in and opens the tool changelist, the page the
README sends newcomers to: every stylesheet, script and image it asks for must come from the
server (nothing is answered by the browser itself), and the admin's CSS must apply. A full-page
screenshot is kept as ``.tmp/artifacts/admin-styles-demo.png``. With ``DEBUG`` off the same server
leaves ``/static/`` to Django, whose answer is a 404: production serves static files elsewhere.

Only ``/usr/bin/chromium`` is used (``scripts/install-browser`` installs it). Without it the browser
test skips, except under ``CI=true`` where it fails.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import httpx2
import pytest

from tests.browser import ARTIFACTS, TIMEOUT_MS, chromium, require_browser
from tests.live import ROOT, LiveServer, migrate, server_env


SCREENSHOT = ARTIFACTS / "admin-styles-demo.png"
CHANGELIST = "/admin/django_mcp_tool_admin/mcptool/"
BASE_CSS = "/static/admin/css/base.css"
USERNAME, PASSWORD = "admin", "styles-admin-pass-1"

pytestmark = [pytest.mark.live, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def _run(env: Mapping[str, str], *args: str) -> str:
    """``python manage.py *args`` from the repository root with the server's environment; its output."""
    result = subprocess.run([sys.executable, "manage.py", *args], check=False, cwd=ROOT, env=server_env(env),
                            timeout=120, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout
    return result.stdout


@pytest.fixture(scope="module")
def demo_env(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, str]:
    """The example project on a fresh SQLite file, with the demo data, its staff user and tool rows."""
    env = {"DJANGO_SETTINGS_MODULE": "example_project.settings",
           "DEMO_SQLITE": str(tmp_path_factory.mktemp("demo-styles") / "demo.sqlite3"),
           "DEMO_ADMIN_USER": USERNAME, "DEMO_ADMIN_PASSWORD": PASSWORD}
    migrate(env)
    _run(env, "mcp_demo_data")
    # The rows would also be made by the server's first MCP request; the admin is opened before any.
    assert _run(env, "mcp_sync_tools").startswith("Tool rows:")
    return MappingProxyType(env)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module; skips (fails under CI=true) before any server starts."""
    require_browser()
    with chromium() as launched:
        yield launched


def test_the_demo_admin_is_styled_by_the_servers_static_files(browser: Any, demo_env: Mapping[str, str]) -> None:
    with LiveServer("example_project.asgi:application", env={**demo_env, "DJANGO_DEBUG": "1"},
                    name="demo-styles") as server:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.set_default_timeout(TIMEOUT_MS)
        static: list[tuple[int, str]] = []
        context.on("response", lambda response: static.append((response.status, response.url))
                   if "/static/" in response.url else None)
        try:
            page = context.new_page()
            page.goto(f"{server.url}/admin/login/?next={CHANGELIST}")
            page.fill("#id_username", USERNAME)
            page.fill("#id_password", PASSWORD)
            with page.expect_navigation():
                page.click("#login-form [type=submit]")
            assert page.url == f"{server.url}{CHANGELIST}", page.url
            page.wait_for_load_state("load")
            # The artifact first, so a failing assertion below still leaves it to look at.
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            seen = f"(screenshot: {SCREENSHOT}; server log: {server.log_path})"

            # The tool rows are there: this is the page newcomers are sent to.
            assert page.get_by_role("link", name="search_books", exact=True).count() == 1, seen
            # base.css came from the server, and so did everything else the pages asked for.
            assert (200, f"{server.url}{BASE_CSS}") in static, f"{static} {seen}"
            assert [(status, url) for status, url in static if status >= 400] == [], seen
            # And it applied: without it the header is a plain block on a transparent background.
            header = page.locator("#header").evaluate(
                "e => { const s = getComputedStyle(e); return [s.display, s.backgroundColor]; }")
            assert header[0] == "flex", f"{header} {seen}"
            assert header[1] not in ("rgba(0, 0, 0, 0)", "transparent"), f"{header} {seen}"
        finally:
            context.close()


def test_without_debug_the_demo_leaves_static_files_to_production(demo_env: Mapping[str, str]) -> None:
    """``DJANGO_DEBUG=0``: ``/static/`` is Django's 404 (the MCP endpoint is served as ever)."""
    with LiveServer("example_project.asgi:application", env={**demo_env, "DJANGO_DEBUG": "0"},
                    name="demo-no-debug") as server:
        response = httpx2.get(server.url + BASE_CSS, timeout=20)
        assert response.status_code == 404, (response.status_code, response.headers)
        assert "#header" not in response.text
        answer = httpx2.get(server.mcp_url, headers={"accept": "text/event-stream"}, timeout=20)
        assert answer.status_code == 405, (answer.status_code, answer.text[:300])
