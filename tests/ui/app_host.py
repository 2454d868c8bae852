"""
An MCP Apps host for the browser tests of views (``tests/ui/test_browser.py``), made of real parts:
the official Python SDK's client (``mcp.Client``) talks to the server, Debian's Chromium (driven by
Playwright's async client) shows the view, and the page between them is a host page built on the
App SDK's own host side, ``AppBridge`` from ``@modelcontextprotocol/ext-apps/app-bridge``
(``scripts/install-app-host`` bundles it into ``tools/app-host/dist/app-host.js``, the global
``McpAppsHost``). Nothing is mocked: the view's own inline App SDK talks JSON-RPC over
``postMessage`` to that bridge, and the bridge's tool calls reach the server through the SDK client.

What the host does, and where the ext-apps specification says so:

- it declares the extension (``io.modelcontextprotocol/ui`` with ``text/html;profile=mcp-app``;
  "Client<>Server Capability Negotiation"), lists the tools, takes a tool's ``_meta.ui.resourceUri``
  and reads that ``ui://`` resource with ``resources/read`` ("Resource Discovery");
- it serves the page at a sandbox origin of its own (``http://sandbox.test``), never the host's
  (``http://host.test``), in an ``<iframe sandbox="allow-scripts">``, with a Content-Security-Policy
  header built from the resource's ``_meta.ui.csp`` ("UI Resource Format", Host Behavior: the
  restrictive default when nothing is declared, never an undeclared origin);
- it connects the bridge before the page's script runs, waits for ``ui/notifications/initialized``,
  then sends the tool's input and result ("Lifecycle");
- it forwards the view's ``tools/call`` to the server, refusing tools whose ``visibility`` leaves
  out ``"app"`` ("Visibility").

One simplification: the specification's "Sandbox proxy" (a web host wraps the view in an
intermediate frame on another origin that relays messages) is collapsed into one frame. The view
still runs on an origin other than the host's, under the CSP header the proxy would have set, and
the bridge talks to it as it would talk to the proxy; the relay itself is not exercised. The view
frame has no ``allow-same-origin``: its origin is opaque, so it can reach neither the host page nor
any storage, and its requests carry ``Origin: null`` (the spec's reference host grants the inner
frame ``allow-same-origin`` only because its proxy writes the page into it; no proxy, no need).

Both origins are answered by Playwright's request routing from Python, so no test host name is
ever resolved; the view's page is exactly the text the server returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from tests.browser import ARTIFACTS, CHROMIUM, TIMEOUT_MS, browser_missing, skip_or_fail
from tests.live import ROOT


# The host's own copies of the extension's names, not django_mcp.ui's: the host is the other party.
EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
APP_HOST_DIR = ROOT / "tools" / "app-host"
#: The bundle scripts/install-app-host builds: the App SDK's host side as the global McpAppsHost.
APP_HOST_BUNDLE = APP_HOST_DIR / "dist" / "app-host.js"
HOST_ORIGIN = "http://host.test"
SANDBOX_ORIGIN = "http://sandbox.test"
VIEW_URL = f"{SANDBOX_ORIGIN}/view"
#: The view frame's sandbox: scripts only (see the module docstring for why no allow-same-origin).
SANDBOX = "allow-scripts"
#: The view's container: fixed, so the frame never moves under the test's clicks (see the page).
VIEW_SIZE = {"width": 860, "height": 420}
HOST_INFO = {"name": "django-mcp-test-host", "version": "1.0"}
#: What the host offers the view (ext-apps "Host Capabilities"): tool calls through it, logging.
HOST_CAPABILITIES = {"serverTools": {}, "logging": {}}


def app_host_missing() -> str | None:
    """Why the views' browser tests cannot run here (no browser, or no host bundle), or None."""
    reason = browser_missing()
    if reason:
        return reason
    if not APP_HOST_BUNDLE.is_file():
        return f"{APP_HOST_BUNDLE.relative_to(ROOT)} is missing: run scripts/install-app-host (it needs npm)"
    return None


def require_app_host() -> None:
    """Skip the test (fail it under CI=true) when the browser or the host bundle is missing."""
    skip_or_fail(app_host_missing(), "the browser tests of views")


def ui_extension() -> Any:
    """The client extension that says this client shows views (for ``mcp.Client(extensions=[...])``)."""
    from mcp.client.extension import advertise

    return advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})


def screenshot_path(name: str) -> Path:
    """Where a view test keeps its screenshot: ``.tmp/artifacts/app-view-<name>.png``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"app-view-{name}.png"


# A CSP source the host will put in a policy: an origin with an optional leading "*." and port.
# The server checks what views declare (django_mcp.ui.security); a host checks again, because a
# quote, a semicolon or a space in an entry would add keywords or directives to the policy.
_SOURCE = re.compile(r"^(https?|wss?)://((\*\.)?[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$")


def _sources(csp: Mapping[str, Any], key: str) -> list[str]:
    values = list(csp.get(key) or [])
    bad = [value for value in values if not isinstance(value, str) or not _SOURCE.match(value)]
    if bad:
        raise ValueError(f"the view's csp {key} holds entries that are not origins: {bad!r}")
    return values


def csp_header(csp: Mapping[str, Any] | None) -> str:
    """
    The Content-Security-Policy a host sends with a view whose ``_meta.ui.csp`` is ``csp``
    (ext-apps specification, "UI Resource Format", Host Behavior, and "Sandbox proxy", item 5).

    Nothing declared gives the specification's restrictive default: ``default-src 'none'``, inline
    scripts and styles, images and media from the page itself or ``data:``, ``connect-src 'none'``.
    ``resourceDomains`` widen scripts, styles, images, fonts (else none) and media; ``connectDomains`` fetch,
    XHR and WebSocket; ``frameDomains`` nested frames (else ``frame-src 'none'``); ``baseUriDomains``
    ``<base href>`` (else ``base-uri 'self'``). ``object-src 'none'`` always.
    """
    csp = csp or {}
    resources = _sources(csp, "resourceDomains")
    connect = _sources(csp, "connectDomains")
    frames = _sources(csp, "frameDomains")
    base = _sources(csp, "baseUriDomains")
    directives = [
        ["default-src", "'none'"],
        ["script-src", "'self'", "'unsafe-inline'", *resources],
        ["style-src", "'self'", "'unsafe-inline'", *resources],
        ["img-src", "'self'", "data:", *resources],
        # Fonts only from declared origins: the restrictive default names no font-src, so
        # default-src 'none' refuses them all (data: fonts too).
        *([["font-src", "'self'", "data:", *resources]] if resources else []),
        ["media-src", "'self'", "data:", *resources],
        ["connect-src", *(connect or ["'none'"])],
        ["frame-src", *(frames or ["'none'"])],
        ["base-uri", *(base or ["'self'"])],
        ["object-src", "'none'"],
    ]
    return "; ".join(" ".join(directive) for directive in directives)


@asynccontextmanager
async def async_chromium() -> AsyncIterator[Any]:
    """A headless Chromium for async tests, launched as ``tests.browser.chromium()`` launches it."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium refuses to start with its sandbox.
        # --disable-dev-shm-usage: containers often have a 64 MB /dev/shm that crashes renderers.
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                   args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            await browser.close()


# The host page. Its script is the host's browser half: an iframe on the sandbox origin, the
# App SDK's AppBridge connected to it, tool calls handed to Python (hostCallTool), and the
# bridge's own calls (sendToolInput, sendToolResult) for the test to make.
_HOST_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>MCP Apps test host</title>
<style>
  body { margin: 0; font: 13px system-ui, sans-serif; background: #e9ecf1; color: #333; }
  header { padding: 6px 12px; background: #2d3440; color: #f0f2f5; }
  header b { font-weight: 600; }
  #views { padding: 12px; }
  #views iframe { display: block; width: %(width)spx; height: %(height)spx; border: 1px solid #b9c0cb;
                  border-radius: 8px; background: #fff; }
</style>
<script src="/app-host.js"></script>
</head>
<body>
<header>MCP Apps test host &middot; <b id="tool"></b> &middot; <span id="era"></span></header>
<div id="views"></div>
<script>
  const {AppBridge, PostMessageTransport} = McpAppsHost;
  window.hostEvents = [];

  // Mounts the view and resolves once it has sent ui/notifications/initialized.
  window.mountView = async ({src, sandbox, hostInfo, hostCapabilities, hostContext, label, era}) => {
    document.getElementById("tool").textContent = label;
    document.getElementById("era").textContent = era;
    const iframe = document.createElement("iframe");
    iframe.id = "view";
    iframe.title = label;
    iframe.setAttribute("sandbox", sandbox);  // before it navigates: sandbox flags apply at navigation
    document.getElementById("views").append(iframe);

    const bridge = new AppBridge(null, hostInfo, hostCapabilities, {hostContext});
    // The view's tools/call, through the host: Python forwards it to the server with the SDK client.
    bridge.oncalltool = (params) => window.hostCallTool(params);
    // The frame keeps the fixed size the host context announces (containerDimensions): a frame that
    // grew with its content (ui/notifications/size-changed) would move the view's buttons between
    // Playwright scrolling one into view and clicking it. The sizes asked for are kept for the report.
    bridge.addEventListener("sizechange", (size) => hostEvents.push({size}));
    bridge.addEventListener("loggingmessage", (params) => hostEvents.push({log: params}));
    const initialized = new Promise((resolve) => bridge.addEventListener("initialized", resolve));
    // Connected before the page exists, so the view's first message (ui/initialize) finds it: the
    // frame's WindowProxy stays the same object across its navigation to the view.
    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    iframe.src = src;
    await initialized;
    window.bridge = bridge;
    return {appInfo: bridge.getAppVersion(), appCapabilities: bridge.getAppCapabilities() || null};
  };
  window.sendToolInput = (args) => window.bridge.sendToolInput({arguments: args});
  window.sendToolResult = (result) => window.bridge.sendToolResult(result);
</script>
</body>
</html>
"""


@dataclass
class ToolCall:
    """A ``tools/call`` the view made through the host, and what the host answered."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    refused: str | None = None


@dataclass
class ShownView:
    """A view the host shows: its frame, what the server sent, and what the host did with it."""

    tool: str
    uri: str
    html: str
    csp: dict[str, Any] | None
    csp_header: str
    result: dict[str, Any]
    init: dict[str, Any]
    frame: Any
    locator: Any


@dataclass
class AppHost:
    """
    One host page in its own browser context, for one connected ``mcp.Client``. Use as an async
    context manager, then :meth:`show` a tool's view; ``calls`` records the view's tool calls,
    ``console`` and ``errors`` what the pages printed and threw.
    """

    browser: Any
    client: Any
    #: Shown in the host page's header (and so in screenshots).
    era: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: The tools as the host's client lists them (wire form), by name.
    tools: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    context: Any = field(default=None, init=False)
    page: Any = field(default=None, init=False)
    #: The view's page and the CSP header it is served with, once show() has read it.
    _view: tuple[str, str] | None = field(default=None, init=False)

    async def __aenter__(self) -> Self:
        self.tools = {tool.name: _wire(tool) for tool in (await self.client.list_tools()).tools}
        self.context = await self.browser.new_context(viewport={"width": 900, "height": 700})
        self.context.set_default_timeout(TIMEOUT_MS)
        await self.context.route(f"{HOST_ORIGIN}/**", self._serve_host)
        await self.context.route(f"{SANDBOX_ORIGIN}/**", self._serve_sandbox)
        self.page = await self.context.new_page()
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        await self.page.expose_binding("hostCallTool", self._call_from_view)
        await self.page.goto(f"{HOST_ORIGIN}/")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.context.close()

    # --- what the two origins serve ----------------------------------------------------------

    async def _serve_host(self, route: Any) -> None:
        path = route.request.url[len(HOST_ORIGIN):]
        if path in ("/", ""):
            await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=_HOST_PAGE % VIEW_SIZE)
        elif path == "/app-host.js":
            await route.fulfill(status=200, content_type="text/javascript; charset=utf-8",
                                body=APP_HOST_BUNDLE.read_bytes())
        else:
            await route.fulfill(status=404, body="not found")

    async def _serve_sandbox(self, route: Any) -> None:
        # Only the view's own page, with the CSP built from its declaration; anything else the page
        # asks its own origin for is a 404 (a self-contained view asks for nothing).
        if route.request.url == VIEW_URL and self._view is not None:
            html, policy = self._view
            await route.fulfill(status=200, body=html, headers={
                "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": policy,
                "Cache-Control": "no-store"})
        else:
            await route.fulfill(status=404, body="not found")

    async def serve_origin(self, origin: str, body: str = "{}") -> list[str]:
        """
        Answer every request to ``origin`` with ``body`` (an API a view might want), and return
        the list the URLs asked for are appended to: what got past the view's CSP.
        """
        seen: list[str] = []

        async def answer(route: Any) -> None:
            seen.append(route.request.url)
            await route.fulfill(status=200, body=body, headers={"Content-Type": "application/json"})

        await self.context.route(f"{origin}/**", answer)
        return seen

    # --- the host's half of the view's tool calls ---------------------------------------------

    async def _call_from_view(self, source: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """The bridge's ``oncalltool``: checks the tool may be called by views, then calls it."""
        # Playwright installs the binding in every frame; only the host page's own script (the
        # bridge) may use it, or a view could call tools without going through the bridge at all.
        if source.get("frame") is not self.page.main_frame:
            raise PermissionError("hostCallTool is the host page's, not a view's")
        name, arguments = params.get("name"), dict(params.get("arguments") or {})
        call = ToolCall(name=name, arguments=arguments)
        self.calls.append(call)
        tool = self.tools.get(name)
        visibility = ((tool or {}).get("_meta") or {}).get("ui", {}).get("visibility") or ["model", "app"]
        if tool is None or "app" not in visibility:
            # ext-apps "Visibility": the host rejects a view's call to a tool not visible to apps.
            call.refused = f"the tool {name!r} is not callable from a view"
            raise PermissionError(call.refused)
        result = await self.client.call_tool(name, arguments)
        call.result = _wire(result)
        return call.result

    # --- showing a view ------------------------------------------------------------------------

    async def show(self, tool_name: str, arguments: dict[str, Any], *,
                   csp: Mapping[str, Any] | None | bool = True) -> ShownView:
        """
        Show ``tool_name``'s view as a host does: read its ``ui://`` resource, call the tool, mount
        the view, send the input and the result. ``csp`` is the view's declared csp (``True``), or a
        host-side replacement for a test of the policy itself.
        """
        tool = self.tools[tool_name]
        uri = ((tool.get("_meta") or {}).get("ui") or {}).get("resourceUri")
        assert uri and uri.startswith("ui://"), f"{tool_name} names no view: {tool.get('_meta')}"
        read = _wire(await self.client.read_resource(uri))
        [content] = read["contents"]
        assert content["mimeType"] == MIME_TYPE, content["mimeType"]
        declared = ((content.get("_meta") or {}).get("ui") or {}).get("csp")
        used = declared if csp is True else csp
        policy = csp_header(used)
        self._view = (content["text"], policy)
        result = _wire(await self.client.call_tool(tool_name, arguments))

        host_context = {"theme": "light", "displayMode": "inline", "availableDisplayModes": ["inline"],
                        "platform": "web", "locale": "en-US", "timeZone": "UTC",
                        "containerDimensions": dict(VIEW_SIZE),
                        "toolInfo": {"tool": tool}}
        init = await self.page.evaluate("(options) => mountView(options)", {
            "src": VIEW_URL, "sandbox": SANDBOX, "hostInfo": HOST_INFO, "hostCapabilities": HOST_CAPABILITIES,
            "hostContext": host_context, "label": tool_name, "era": self.era})
        await self.page.evaluate("(args) => sendToolInput(args)", arguments)
        await self.page.evaluate("(result) => sendToolResult(result)", result)
        element = await self.page.query_selector("#view")
        frame = await element.content_frame()
        return ShownView(tool=tool_name, uri=uri, html=content["text"], csp=used, csp_header=policy, result=result,
                         init=init, frame=frame, locator=self.page.frame_locator("#view"))

    async def screenshot(self, name: str) -> Path:
        """The host page with its view, kept as ``.tmp/artifacts/app-view-<name>.png``."""
        path = screenshot_path(name)
        await self.page.screenshot(path=str(path), full_page=True)
        return path

    def report(self) -> str:
        """What to print beside a failed assertion: the calls, console and page errors."""
        calls = [(call.name, call.arguments, call.refused or _text(call.result)) for call in self.calls]
        return json.dumps({"calls": calls, "console": self.console[-20:], "errors": self.errors}, indent=1)


def _wire(model: Any) -> dict[str, Any]:
    """An SDK model as its JSON-RPC wire form (``_meta``, ``structuredContent``...)."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _text(result: dict[str, Any] | None) -> str:
    return "\n".join(block.get("text", "") for block in (result or {}).get("content") or [])
