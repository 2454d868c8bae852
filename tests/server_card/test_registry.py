"""
``django_mcp.server_card.registry``: the MCP Registry's ``server.json`` made from a Server Card,
checked against the registry's schema (``server.schema.json`` beside this file, from
modelcontextprotocol/registry ``docs/reference/server-json/schema.ts``).
"""

from __future__ import annotations

from django_mcp.backend import package_version
from django_mcp.server_card.card import ServerCard
from django_mcp.server_card.registry import (PUBLISHER_META, SERVER_JSON_SCHEMA_URL, pypi_package, registry_icons,
                                             repository, server_json)
from tests.server_card.schemas import server_json_errors
from tests.server_card.test_card import BASE, DATA_ICON, HTTPS_ICON, IDENTITY, mcp_settings


def test_a_remote_server_json_validates():
    with mcp_settings(**IDENTITY):
        card = ServerCard(repository=repository("https://github.com/acme/library")).as_dict(BASE)
    document = server_json(card)
    assert server_json_errors(document) == []
    assert document["$schema"] == SERVER_JSON_SCHEMA_URL
    for key in ("name", "title", "description", "version", "websiteUrl", "repository"):
        assert document[key] == card[key]
    # The registry's remotes carry no protocol versions, and its icons no data: URI.
    assert document["remotes"] == [{"type": "streamable-http", "url": f"{BASE}/mcp"}, {"type": "sse", "url": f"{BASE}/sse"}]
    assert document["icons"] == [HTTPS_ICON]
    assert document["_meta"] == {PUBLISHER_META: {"tool": "django-mcpkit", "version": package_version()}}
    assert "packages" not in document


def test_a_package_and_no_remotes():
    card = ServerCard(name="io.github.acme/library").as_dict(BASE)
    document = server_json(card, packages=[pypi_package("library-mcp", "1.2.0")], remotes=False)
    assert server_json_errors(document) == []
    assert "remotes" not in document
    assert document["packages"] == [{"registryType": "pypi", "registryBaseUrl": "https://pypi.org",
                                     "identifier": "library-mcp", "version": "1.2.0", "runtimeHint": "uvx",
                                     "transport": {"type": "stdio"}}]


def test_headers_stay_on_the_remotes():
    header = {"name": "X-Api-Key", "isRequired": True, "isSecret": True}
    document = server_json(ServerCard(headers=[header]).as_dict(BASE))
    assert server_json_errors(document) == []
    assert all(remote["headers"] == [header] for remote in document["remotes"])


def test_registry_icons():
    long = {"src": "https://example.com/" + "i" * 260 + ".png"}
    plain_http = {"src": "http://example.com/icon.png"}
    odd_type = {"src": "https://example.com/icon.gif", "mimeType": "image/gif"}
    no_type = {"src": "https://example.com/icon.png"}
    assert registry_icons([DATA_ICON, long, plain_http, odd_type, no_type, HTTPS_ICON]) == [no_type, HTTPS_ICON]


def test_repository():
    assert repository("https://github.com/acme/library") == {"url": "https://github.com/acme/library", "source": "github"}
    assert repository("https://gitlab.com/acme/library/", subfolder="/backend/")["subfolder"] == "backend"
    assert repository("https://git.example.com/acme/library")["source"] == "git.example.com"
    assert repository("https://git.example.com/x", source="gitea")["source"] == "gitea"


def test_the_schema_refuses_what_the_registry_refuses():
    good = server_json(ServerCard().as_dict(BASE))
    assert server_json_errors(good) == []
    assert server_json_errors({**good, "name": "no-namespace"})
    assert server_json_errors({**good, "description": "x" * 101})
    assert server_json_errors({**good, "icons": [DATA_ICON]})
    assert server_json_errors({**good, "packages": [{**pypi_package("p", "1"), "version": "latest"}]})
    assert server_json_errors({key: value for key, value in good.items() if key != "version"})
