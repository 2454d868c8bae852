"""
The server's identity (issue 41, part 4): ``SERVER_TITLE``, ``SERVER_DESCRIPTION``,
``SERVER_ICONS`` and ``SERVER_WEBSITE_URL`` in ``serverInfo`` (``Implementation``, MCP spec
2025-11-25, schema) of ``initialize``, ``server/discover`` and every 2026-07-28 result; the checks
that guard them (E009, E010); an invalid icon left out rather than failing every handshake.
The consent page's icon is in ``tests/oauth/test_browser.py``, the SDK client's view of them in
``tests/test_example_project.py``.
"""

from __future__ import annotations

import pytest
from django.test import override_settings

from django_mcp.checks import check_server_identity
from django_mcp.oauth.views import consent_icon
from django_mcp.test import McpClient


ICON = {"src": "data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnLz4=",
        "mimeType": "image/svg+xml", "sizes": ["any"]}
DARK = {"src": "https://library.example.com/icon-dark.png", "mimeType": "image/png", "sizes": ["48x48"],
        "theme": "dark"}
IDENTITY = {"SERVER_NAME": "library", "SERVER_TITLE": "Library catalogue",
            "SERVER_DESCRIPTION": "Books, authors and loans of the town library.",
            "SERVER_ICONS": [DARK, ICON], "SERVER_WEBSITE_URL": "https://library.example.com/"}
EXPECTED = {"name": "library", "title": "Library catalogue",
            "description": "Books, authors and loans of the town library.", "icons": [DARK, ICON],
            "websiteUrl": "https://library.example.com/"}


def identity(**more):
    from django.conf import settings

    return override_settings(DJANGO_MCP={**settings.DJANGO_MCP, **IDENTITY, **more})


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
def test_initialize_carries_the_servers_identity(version, db):
    with identity():
        info = McpClient(version).initialize()["serverInfo"]
    assert {key: info[key] for key in EXPECTED} == EXPECTED and info["version"]


def test_2026_07_28_discovery_and_results_carry_it(db):
    with identity():
        client = McpClient("2026-07-28")
        discovered = client.discover()
        called = client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    for result in (discovered, called):  # in each result's _meta (MCP spec 2026-07-28, basic#meta)
        assert {key: result["_meta"]["io.modelcontextprotocol/serverInfo"][key] for key in EXPECTED} == EXPECTED


def test_without_the_settings_only_name_and_version(db):
    info = McpClient("2025-11-25").initialize()["serverInfo"]
    assert set(info) <= {"name", "version", "title"}


def test_an_invalid_icon_is_left_out_and_the_check_says_why(db):
    bad = {"src": "icon.png"}
    with identity(SERVER_ICONS=[bad, ICON, {"src": "https://x.example/i.png", "theme": "dim"}, "icon.png"]):
        info = McpClient("2025-11-25").initialize()["serverInfo"]
        messages = check_server_identity()
    assert info["icons"] == [ICON]
    assert [message.id for message in messages] == ["django_mcp.E009"] * 3
    assert "[0] needs \"src\"" in messages[0].msg and '"theme"' in messages[1].msg and "not a dict" in messages[2].msg


@pytest.mark.parametrize("website", ["library.example.com", "ftp://library.example.com/", 42])
def test_a_website_that_is_not_an_http_url_is_an_error(website):
    with identity(SERVER_WEBSITE_URL=website):
        assert [message.id for message in check_server_identity()] == ["django_mcp.E010"]


def test_the_identity_settings_pass_the_check():
    with identity():
        assert check_server_identity() == []
    assert check_server_identity() == []


def test_the_consent_page_takes_a_light_or_theme_less_icon_first():
    with identity():
        assert consent_icon() == ICON["src"]
    with identity(SERVER_ICONS=[DARK]):
        assert consent_icon() == DARK["src"]
    with identity(SERVER_ICONS=[]):
        assert consent_icon() is None
