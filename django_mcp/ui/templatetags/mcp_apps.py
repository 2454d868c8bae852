"""
``{% load mcp_apps %}`` — what a view's template needs to talk to its host:

- ``{% mcp_app_script %}`` puts the official MCP Apps SDK (``@modelcontextprotocol/ext-apps``, its
  browser build, vendored by ``scripts/install-app-sdk``) in the page as an inline script that
  defines ``McpApps``; the page's own script then does::

      const app = new McpApps.App({name: "Book card", version: "1.0"});
      app.addEventListener("toolresult", (result) => render(result.structuredContent));
      await app.connect();     // the handshake with the host (ui/initialize)

  Inline, because a view lives on the host's sandbox origin, whose CSP lets the page reach nothing
  it did not declare: no CDN, no ``{% static %}`` URL of this server.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django import template
from django.utils.safestring import SafeString, mark_safe


register = template.Library()

#: The vendored SDK (scripts/install-app-sdk keeps it at the pinned version).
SDK_VERSION = "2.0.4"
SDK_FILE = Path(__file__).resolve().parent.parent / "vendor" / f"mcp-apps-{SDK_VERSION}.js"


@cache
def sdk_source() -> str:
    """The vendored SDK, as an inline script may hold it."""
    text = SDK_FILE.read_text(encoding="utf-8")
    # Checked when vendored too; an inline script must never contain its own end tag.
    if "</script" in text.lower():
        raise template.TemplateSyntaxError(f"{SDK_FILE} contains '</script'; run scripts/install-app-sdk --force")
    return text


@register.simple_tag
def mcp_app_script() -> SafeString:
    """``<script>`` with the MCP Apps SDK, defining ``McpApps`` (``App``, ``PostMessageTransport``…)."""
    return mark_safe(f"<script>{sdk_source()}</script>")  # noqa: S308 - the vendored, checked file
