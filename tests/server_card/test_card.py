"""
``django_mcp.server_card.card``: the Server Card built from a site (SEP-2127 draft,
experimental-ext-server-card ``schema.ts`` at 8924e086), checked against the draft's schema
(``server-card.schema.json`` beside this file).
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import override_settings

from django_mcp.permissions import IsAuthenticated
from django_mcp.protocol.versions import ALL_VERSIONS, LEGACY_VERSIONS
from django_mcp.server_card.card import (MEDIA_TYPE, SCHEMA_URL, TEXT_MAX_LENGTH, ServerCard, card_name,
                                         public_base_url, reverse_dns, shorten)
from django_mcp.sites import McpSite
from tests.server_card.schemas import card_errors


BASE = "https://mcp.example.com"
DATA_ICON = {"src": "data:image/svg+xml;base64,PHN2ZyB4bWxucz0naHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmcnLz4=",
             "mimeType": "image/svg+xml", "sizes": ["any"]}
HTTPS_ICON = {"src": "https://library.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"],
              "theme": "dark"}
IDENTITY = {"SERVER_NAME": "library", "SERVER_TITLE": "Library catalogue", "SERVER_VERSION": "1.4.0",
            "SERVER_DESCRIPTION": "Books, authors and loans of the town library.",
            "SERVER_ICONS": [HTTPS_ICON, DATA_ICON], "SERVER_WEBSITE_URL": "https://library.example.com/"}


def mcp_settings(**values):
    return override_settings(DJANGO_MCP={**settings.DJANGO_MCP, **values})


def guarded_site() -> McpSite:
    """A site with a tool anyone may call and one only signed-in users are offered."""
    site = McpSite("server-card-tests")
    site.tool(name="open_catalogue_search")(lambda query: query)
    site.tool(name="secret_staff_tool", permission_classes=[IsAuthenticated])(lambda: "")
    site.resource("memo://secret-resource", name="secret_resource", permission_classes=[IsAuthenticated])(lambda: "")
    return site


def test_the_card_carries_the_sites_identity_and_validates():
    with mcp_settings(**IDENTITY):
        card = ServerCard().as_dict(BASE)
    assert card_errors(card) == []
    assert card["$schema"] == SCHEMA_URL
    assert (card["name"], card["version"], card["title"]) == ("com.example.mcp/library", "1.4.0", "Library catalogue")
    assert card["description"] == "Books, authors and loans of the town library."
    assert card["websiteUrl"] == "https://library.example.com/"
    assert card["icons"] == [HTTPS_ICON, DATA_ICON]  # a data: URI is a URI: the card keeps it


def test_the_remotes_name_every_endpoint_and_the_revisions_server_discover_names():
    card = ServerCard().as_dict(BASE)
    assert card_errors(card) == []
    streamable, sse = card["remotes"]
    assert streamable == {"type": "streamable-http", "url": f"{BASE}/mcp",
                          "supportedProtocolVersions": list(reversed(ALL_VERSIONS))}
    assert sse == {"type": "sse", "url": f"{BASE}/sse", "supportedProtocolVersions": list(reversed(LEGACY_VERSIONS))}


def test_settings_move_the_endpoints_and_leave_the_sse_one_out():
    with mcp_settings(MCP_PATH="api/mcp/", SSE_PATH=None):
        card = ServerCard().as_dict(BASE + "/")
    assert [(remote["type"], remote["url"]) for remote in card["remotes"]] == [("streamable-http", f"{BASE}/api/mcp")]


def test_a_second_sites_card_names_its_own_endpoint_only():
    card = ServerCard(site=guarded_site(), endpoint="/staff/mcp").as_dict(BASE)
    assert [(remote["type"], remote["url"]) for remote in card["remotes"]] == [("streamable-http", f"{BASE}/staff/mcp")]


def test_no_primitive_is_named_not_even_those_an_anonymous_client_is_offered():
    """
    The draft leaves tools, resources and prompts out of the card ("Server Cards do not enumerate
    primitives"): they are listed per client, behind its permissions. So nothing a permission hides
    can leak through the card, and neither does anything else the site registers.
    """
    site = guarded_site()
    text = json.dumps(ServerCard(site=site).as_dict(BASE))
    for name in ("open_catalogue_search", "secret_staff_tool", "secret_resource", "memo://"):
        assert name not in text
    assert not {"tools", "resources", "prompts", "capabilities"} & set(json.loads(text))


def test_headers_repository_and_meta_are_carried():
    header = {"name": "X-Api-Key", "description": "Your key, from your profile page.", "isRequired": True,
              "isSecret": True}
    card = ServerCard(name="com.example/library", headers=[header],
                      repository={"url": "https://github.com/acme/library", "source": "github"},
                      meta={"com.example/build": {"commit": "abc123"}}).as_dict(BASE)
    assert card_errors(card) == []
    assert card["name"] == "com.example/library"
    assert all(remote["headers"] == [header] for remote in card["remotes"])
    assert card["repository"] == {"url": "https://github.com/acme/library", "source": "github"}
    assert card["_meta"] == {"com.example/build": {"commit": "abc123"}}


def test_a_subclass_sets_the_same_options():
    class LibraryCard(ServerCard):
        name = "com.example/library"
        repository = {"url": "https://gitlab.com/acme/library", "source": "gitlab"}

    card = LibraryCard().as_dict(BASE)
    assert card_errors(card) == [] and card["name"] == "com.example/library" and card["repository"]["source"] == "gitlab"


def test_an_unknown_option_is_an_error():
    with pytest.raises(TypeError, match="title"):
        ServerCard(title="Not an option: the title is the site's")
    with pytest.raises(TypeError, match="as_dict"):
        ServerCard(as_dict=None)


@pytest.mark.parametrize(("server_name", "base", "expected"), [
    ("com.example/library", BASE, "com.example/library"),  # already a card name: kept
    ("library", BASE, "com.example.mcp/library"),
    ("django-mcp", "https://MCP.Example.com:8443", "com.example.mcp/django-mcp"),
    ("My Library!", BASE, "com.example.mcp/My-Library"),
    ("library", "http://127.0.0.1:8000", "127.0.0.1/library"),
    ("library", "http://[::1]:8000", "1/library"),
    ("library", "http://localhost", "localhost/library"),
    ("a/b/c", BASE, "com.example.mcp/a-b-c"),
])
def test_card_name(server_name, base, expected):
    name = card_name(server_name, base)
    assert name == expected
    assert card_errors({"$schema": SCHEMA_URL, "name": name, "version": "1", "description": "d"}) == []


def test_reverse_dns():
    assert reverse_dns("mcp.example.com") == "com.example.mcp"
    assert reverse_dns("10.0.0.1") == "10.0.0.1"
    assert reverse_dns("") == "localhost"


def test_the_description_falls_back_and_fits_the_draft():
    with mcp_settings(SERVER_NAME="library"):
        assert ServerCard().as_dict(BASE)["description"] == "The MCP server library."
    with mcp_settings(SERVER_NAME="library", SERVER_TITLE="Library catalogue"):
        assert ServerCard().as_dict(BASE)["description"] == "Library catalogue"
    long = "Books, authors and loans of the town library, " * 5
    with mcp_settings(SERVER_DESCRIPTION=long, SERVER_TITLE="T" * 150):
        card = ServerCard().as_dict(BASE)
    assert card_errors(card) == []
    assert len(card["description"]) <= TEXT_MAX_LENGTH and card["description"].endswith("…")
    assert len(card["title"]) == TEXT_MAX_LENGTH


def test_shorten():
    assert shorten("  two\n lines ") == "two lines"
    assert shorten("word " * 30, 20) == "word word word word…"
    assert len(shorten("x" * 300)) == TEXT_MAX_LENGTH


def test_public_base_url(rf):
    assert public_base_url() is None
    assert public_base_url(rf.get("/", HTTP_HOST="localhost:8000")) == "http://localhost:8000"
    with mcp_settings(PUBLIC_BASE_URL="https://mcp.example.com/"):
        assert public_base_url() == "https://mcp.example.com"
        assert public_base_url(rf.get("/", HTTP_HOST="localhost")) == "https://mcp.example.com"


def test_the_media_type():
    assert MEDIA_TYPE == "application/mcp-server-card+json"


@pytest.mark.parametrize("broken", [
    {"name": "example-org/no-schema", "version": "1.0.0", "description": "No $schema."},
    {"$schema": "https://static.modelcontextprotocol.io/schemas/2025-11-25/server-card.schema.json",
     "name": "example-org/dated", "version": "1.0.0", "description": "A dated schema URL."},
    {"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server.schema.json",
     "name": "example-org/registry-schema", "version": "1.0.0", "description": "The registry's schema URL."},
    {"$schema": SCHEMA_URL, "name": "no-slash", "version": "1.0.0", "description": "A name without a slash."},
    {"$schema": SCHEMA_URL, "version": "1.0.0", "description": "No name."},
    {"$schema": SCHEMA_URL, "name": "a/b", "version": "1", "description": ""},
    {"$schema": SCHEMA_URL, "name": "a/b", "version": "1", "description": "d",
     "remotes": [{"type": "websocket", "url": "wss://example.com"}]},
])
def test_the_schema_refuses_what_the_draft_refuses(broken):
    """The schema fixture itself: the shapes the draft's own invalid examples describe fail it."""
    assert card_errors(broken)
