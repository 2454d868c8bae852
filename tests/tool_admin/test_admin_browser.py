"""
The tool admin's changelist in a real browser: Debian's Chromium, driven by Playwright's client,
against a live daphne server of the test settings with the tool admin on (``MCP_TEST_TOOL_ADMIN=1``),
as a project in development (``tests.browser.with_static_files``: staticfiles, ``DEBUG``).

``test_admin_tools.py`` checks the admin in process; here a staff member's browser does it: log in,
see a row per tool of the default site with its ``enabled`` switch, untick one and Save
(``list_editable``), tick it again with the "Enable the selected tools" action, and after each
change the server's MCP endpoint follows it, ``tools/list`` and ``tools/call`` alike. A full-page
screenshot of the changelist after the Save is kept as ``.tmp/artifacts/admin-tools.png``.

Only ``/usr/bin/chromium`` is used (``scripts/install-browser`` installs it), never Playwright's own
browser downloads. Without it the test skips, except under ``CI=true`` where it fails.

The admin's CSS and JavaScript (``actions.js`` included) come from the server under test, which
serves them as ``runserver`` does (``django_mcp.asgi``): nothing is answered by the browser itself, and
every request for a static file must succeed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import httpx2
import pytest

from tests.browser import ARTIFACTS, TIMEOUT_MS, chromium, require_browser, with_static_files
from tests.live import ROOT, LiveServer, server_env
from tests.stored_prompts.admin_browser import create_superuser

SCREENSHOT = ARTIFACTS / "admin-tools.png"
CHANGELIST = "/admin/django_mcp_tool_admin/mcptool/"
USERNAME, PASSWORD = "tool-admin", "tool-admin-pass-1"
#: The tool switched off and on again: one of tests/testapp/mcp.py's, callable without arguments.
TOOL = "whoami"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

pytestmark = [pytest.mark.live, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="session", autouse=True)
def _require_browser() -> None:
    """
    Skip (fail under CI=true) before anything else: a session-scoped autouse fixture runs before the
    other session fixtures, so a machine without Chromium does not migrate or start a server for nothing.
    """
    require_browser()


def _django(env: Mapping[str, str], *args: str) -> str:
    """Run ``python *args`` from the repository root with the live server's environment; its output."""
    result = subprocess.run([sys.executable, *args], check=False, cwd=ROOT, env=server_env(env), timeout=120,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout
    return result.stdout


@pytest.fixture(scope="module")
def tool_admin_env(sqlite_server_env: Mapping[str, str]) -> Mapping[str, str]:
    """
    The session's migrated SQLite database with the tool admin on, its tool rows and a superuser,
    served with its static files.
    """
    env = with_static_files({**sqlite_server_env, "MCP_TEST_TOOL_ADMIN": "1"})
    # The rows would also be made by the server's first MCP request; the admin is opened before any,
    # so make them the way a deployment does at start-up.
    output = _django(env, "-m", "django", "mcp_sync_tools")
    assert output.startswith("Tool rows:"), output
    create_superuser(env, USERNAME, PASSWORD)
    return MappingProxyType(env)


@pytest.fixture(scope="module")
def code_tools(tool_admin_env: Mapping[str, str]) -> list[str]:
    """The names of the default site's tools in code, as the server's own process sees them."""
    code = ("import django, json; django.setup(); from django_mcp.sites import get_default_site; "
            "print(json.dumps(sorted(tool.name for tool in get_default_site().tools)))")
    names = json.loads(_django(tool_admin_env, "-c", code).strip().splitlines()[-1])
    assert TOOL in names, names
    return names


@pytest.fixture(scope="module")
def server(tool_admin_env: Mapping[str, str]) -> Iterator[LiveServer]:
    """A daphne server of the test settings with the tool admin on, for this module."""
    with LiveServer(env=tool_admin_env, name="live-tool-admin") as live:
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh context (no cookies)."""
    # Wide enough for the changelist's nine columns beside both sidebars, so the screenshot shows
    # them all: narrower, the table scrolls sideways inside its box and a full-page shot cuts it.
    context = browser.new_context(viewport={"width": 1800, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def static_responses(page: Any) -> list[tuple[int, str]]:
    """The status and URL of every response for a static file the page receives, as they come."""
    seen: list[tuple[int, str]] = []
    page.on("response", lambda response: seen.append((response.status, response.url))
            if "/static/" in response.url else None)
    return seen


def _mcp(server: LiveServer, request_id: int, method: str, params: dict[str, Any],
         name: str | None = None) -> dict[str, Any]:
    """
    One stateless 2026-07-28 request, anonymous (this server does not require authentication):
    the protocol version and client in ``_meta``, the method (and tool name) mirrored in headers.
    Returns the JSON-RPC response, sent as JSON or as one SSE event.
    """
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "admin-browser-test", "version": "1"}}
    headers = {**MCP_HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name:
        headers["mcp-name"] = name
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    response = httpx2.post(server.mcp_url, json=body, headers=headers, timeout=20)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(next(item for item in data if item))
    assert response.headers.get("content-type", "").startswith("application/json"), (response.status_code,
                                                                                       response.text)
    return response.json()


def _listed(server: LiveServer) -> set[str]:
    """Every tool name ``tools/list`` gives an anonymous client, all pages."""
    names: set[str] = set()
    params: dict[str, Any] = {}
    for request_id in range(1, 50):
        answer = _mcp(server, request_id, "tools/list", params)
        assert "result" in answer, answer
        names |= {tool["name"] for tool in answer["result"]["tools"]}
        cursor = answer["result"].get("nextCursor")
        if not cursor:
            return names
        params = {"cursor": cursor}
    raise AssertionError("tools/list never ended")


def _call(server: LiveServer, name: str) -> dict[str, Any]:
    """The JSON-RPC response to ``tools/call`` of ``name`` without arguments."""
    return _mcp(server, 100, "tools/call", {"name": name, "arguments": {}}, name=name)


def _rows(page: Any) -> Any:
    """The changelist's result rows."""
    return page.locator("#result_list tbody tr")


def _row(page: Any, name: str) -> Any:
    """The changelist row whose name link is exactly ``name``."""
    row = _rows(page).filter(has=page.get_by_role("link", name=name, exact=True))
    assert row.count() == 1, f"{row.count()} rows named {name!r}"
    return row


def _switches(page: Any) -> dict[str, bool]:
    """Each row's tool name and whether its ``enabled`` checkbox is ticked."""
    switches = {}
    for row in _rows(page).all():
        name = row.locator("th.field-name").inner_text().strip()
        switches[name] = row.locator("td.field-enabled input[type=checkbox]").is_checked()
    return switches


def _messages(page: Any) -> str:
    """The admin's messages on the page (a Save reports at SUCCESS level, the actions' message_user at INFO)."""
    return " ".join(page.locator("ul.messagelist li").all_inner_texts())


def test_switch_a_tool_off_and_on_in_the_changelist(server: LiveServer, code_tools: list[str], page: Any,
                                                    static_responses: list[tuple[int, str]]) -> None:
    """Untick and Save, then the "Enable the selected tools" action: MCP lists and calls follow each."""
    # Before anything changes, every tool in code is served.
    assert _listed(server) == set(code_tools)

    page.goto(f"{server.url}/admin/login/?next={CHANGELIST}")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("#login-form [type=submit]")
    assert page.url == f"{server.url}{CHANGELIST}", page.url
    # The admin's own stylesheet applied, as the server sent it: the page is what staff see.
    assert page.locator("#header").evaluate("e => getComputedStyle(e).display") == "flex"
    assert any(url.endswith("/static/admin/css/base.css") for _, url in static_responses), static_responses

    # A row per tool in code, each switched on, none added by hand.
    assert _switches(page) == dict.fromkeys(code_tools, True)

    _row(page, TOOL).locator("td.field-enabled input[type=checkbox]").uncheck()
    with page.expect_navigation():
        page.click("#changelist-form input[name=_save]")
    # The artifact first, so a failing assertion below still leaves it to look at.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    seen = f"(changelist screenshot: {SCREENSHOT})"
    assert page.locator("ul.messagelist li.success").all_inner_texts() == ["1 MCP tool was changed successfully."], \
        f"{_messages(page)!r} {seen}"
    page.reload()
    assert _switches(page) == {name: name != TOOL for name in code_tools}, seen

    # The server follows at once: the save announced the change, so no snapshot of the rows is kept.
    assert _listed(server) == set(code_tools) - {TOOL}
    refused = _call(server, TOOL)
    # A disabled tool is reported exactly like one that does not exist (invalid params).
    assert refused.get("error", {}).get("code") == -32602, refused
    assert refused["error"]["message"] == f"Unknown tool: {TOOL}", refused

    # On again through the action: select the row, choose the action, Go.
    _row(page, TOOL).locator("input.action-select").check()
    page.select_option("select[name=action]", "enable_tools")
    with page.expect_navigation():
        page.click("button[name=index]")
    assert _messages(page) == "1 tool(s) enabled.", _messages(page)
    assert _switches(page) == dict.fromkeys(code_tools, True)
    # Every stylesheet, script and image of every page came from the server.
    assert [(status, url) for status, url in static_responses if status >= 400] == []

    assert _listed(server) == set(code_tools)
    called = _call(server, TOOL)
    assert called.get("result", {}).get("isError") is not True, called
    assert called["result"]["content"][0]["text"] == "anonymous", called
