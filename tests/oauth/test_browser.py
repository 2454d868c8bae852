"""
The OAuth authorization code flow in a real browser: Debian's Chromium, driven by Playwright's
client, against a live daphne server with authentication required.

``test_live_flow.py`` submits the login and consent forms with an HTTP client; here a browser does
it, so what a person meets is tested too: the redirect to the login page and back, the cookies and
CSRF tokens set along the way, the consent page as rendered (a screenshot is kept under
``.tmp/artifacts/``), and the redirect to the client's callback after Allow or Deny.

Only ``/usr/bin/chromium`` is used (``scripts/install-browser`` installs it), never Playwright's own
browser downloads. Without it the tests skip, except under ``CI=true`` where they fail.

Nothing listens on the client's redirect URI: the test reads the browser's request to it, which
carries the ``code``/``error`` and ``state`` a native MCP client's loopback listener would get
(RFC 8252 section 7.3).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.browser import ARTIFACTS, TIMEOUT_MS, chromium, require_browser
from tests.live import LiveServer, free_port

from . import flow
from .conftest import PASSWORDS


CONSENT_SCREENSHOT = ARTIFACTS / "oauth-consent.png"
CLIENT_NAME = "Browser test client"
#: What the consent page must say for the default MCP scopes (django_mcp.oauth.scopes.MCP_SCOPES),
#: spelled out here so a change of wording is a deliberate change of this test too.
SCOPE_WORDS = {
    "mcp:tools": "Use the tools this site offers you, such as searches and changes made in your name",
    "mcp:resources": "Read the data this site shares with you",
    "mcp:prompts": "Use this site's prompt templates",
}
pytestmark = [pytest.mark.live, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="session", autouse=True)
def _require_browser() -> None:
    """
    Skip (fail under CI=true) before anything else: autouse fixtures of a scope run first, so a
    machine without Chromium does not start a live server for nothing.
    """
    require_browser()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module; each test opens its own context (fresh cookies)."""
    with chromium() as launched:
        yield launched


class Callback:
    """
    The client's redirect URI, on a loopback port where nothing needs to listen.

    The browser reaches it by following the authorization server's 302, and Playwright's routing
    only sees the first request of a redirect chain, never its targets: ``page.route`` cannot
    answer it. So the test reads the URL from the browser's request itself, which exists as soon
    as the browser starts to follow the redirect, whatever the connection then does: it is exactly
    what the client's loopback listener would have received (RFC 8252 section 7.3).
    """

    def __init__(self) -> None:
        self.uri = f"http://127.0.0.1:{free_port()}/callback"

    def follow(self, page: Any, selector: str) -> dict[str, list[str]]:
        """Click ``selector`` on the consent page; the query the browser then took to the client."""
        with page.expect_request(lambda request: request.url.startswith(self.uri + "?")) as caught:
            page.click(selector)
        request = caught.value
        # The server sent the browser there with a redirect (RFC 6749 section 4.1.2), in answer to
        # the consent form's POST: not a script, not a link.
        answered = request.redirected_from
        assert answered is not None, f"{request.url} was not reached through a redirect"
        assert answered.method == "POST" and urlsplit(answered.url).path == "/oauth/authorize/", answered.url
        response = answered.response()
        assert response is not None and response.status == 302, response
        assert response.headers["location"].startswith(self.uri + "?"), response.headers
        return parse_qs(urlsplit(request.url).query)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1000, "height": 760})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


def _start(server: LiveServer, page: Any, state: str) -> tuple[flow.Discovery, dict[str, Any], str, Callback]:
    """Discover and register over HTTP, then sign alice in in the browser, up to the consent page."""
    callback = Callback()
    discovery = flow.discover(server.mcp_url)
    client = flow.register(discovery, callback.uri, client_name=CLIENT_NAME)
    verifier, challenge = flow.pkce_pair()
    url = flow.authorization_url(discovery, client["client_id"], challenge, state=state, redirect_uri=callback.uri)
    page.goto(url)
    # Not signed in: DOT's AuthorizationView sends the browser to LOGIN_URL with ?next=.
    page.wait_for_selector("#login-form")
    assert urlsplit(page.url).path == "/accounts/login/", page.url
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORDS["alice"])
    with page.expect_navigation():
        page.click("#sign-in")
    page.wait_for_selector("#authorizationForm")
    assert urlsplit(page.url).path == "/oauth/authorize/", page.url
    return discovery, client, verifier, callback


def _mcp_result(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a Streamable HTTP answer, sent as JSON or as one SSE event."""
    assert response.status_code == 200, response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(next(item for item in data if item))
    return response.json()


def _whoami(server: LiveServer, token: str) -> str:
    """initialize, then tools/call whoami in that session (MCP 2025-11-25, basic/lifecycle)."""
    opened = flow.mcp_post(server.mcp_url, token, flow.INITIALIZE)
    assert "result" in _mcp_result(opened), opened.text
    session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    initialized = flow.mcp_post(server.mcp_url, token, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                **session)
    assert initialized.status_code == 202, initialized.text
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    answer = _mcp_result(flow.mcp_post(server.mcp_url, token, call, **session))
    return answer["result"]["content"][0]["text"]


def test_sign_in_consent_and_token_in_a_browser(oauth_server: LiveServer, page: Any) -> None:
    discovery, client, verifier, callback = _start(oauth_server, page, state="browser-state-1")

    # The artifact first, so a failing assertion below still leaves it to look at.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(CONSENT_SCREENSHOT), full_page=True)
    seen = f"(consent page screenshot: {CONSENT_SCREENSHOT})"
    heading = page.inner_text("#authorizationForm h1")
    assert CLIENT_NAME in heading, f"{heading!r} {seen}"
    listed = [text.strip() for text in page.locator("#scopes li").all_inner_texts()]
    assert sorted(listed) == sorted(SCOPE_WORDS.values()), f"{listed!r} {seen}"
    body = page.inner_text("body")
    assert "Signed in as alice" in body and "127.0.0.1" in body, f"{body!r} {seen}"
    assert page.is_visible("#allow") and page.is_visible("#deny"), seen
    # Whom the user grants access to: the server's name and icon (DJANGO_MCP["SERVER_ICONS"]), drawn.
    assert page.inner_text("#server") == "django-mcp-tests", seen
    assert page.evaluate("document.querySelector('#server img').naturalWidth") == 48, seen

    query = callback.follow(page, "#allow")
    # RFC 6749 section 4.1.2: the code and the client's state, unchanged, on the redirect URI.
    assert query["state"] == ["browser-state-1"], query
    tokens = flow.tokens_of(flow.exchange(discovery, client["client_id"], query["code"][0], verifier,
                                          redirect_uri=callback.uri))
    assert set(tokens.scope.split()) == set(SCOPE_WORDS)
    assert _whoami(oauth_server, tokens.access_token) == "alice mcp:prompts mcp:resources mcp:tools"
    # The code is single use: a second exchange is refused (RFC 6749 section 4.1.2).
    replay = flow.exchange(discovery, client["client_id"], query["code"][0], verifier, redirect_uri=callback.uri)
    assert replay.status_code == 400, replay.text


def test_deny_sends_access_denied_to_the_client(oauth_server: LiveServer, page: Any) -> None:
    _, _, _, callback = _start(oauth_server, page, state="browser-state-2")
    query = callback.follow(page, "#deny")
    # RFC 6749 section 4.1.2.1: the refusal goes back to the client as error=access_denied, with its state.
    assert query.get("error") == ["access_denied"], query
    assert query.get("state") == ["browser-state-2"], query
    assert "code" not in query, query
