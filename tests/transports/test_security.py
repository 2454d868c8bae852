"""Host/Origin checks and content negotiation (MCP spec 2025-11-25, basic/transports#streamable-http; MCP security best practices)."""

import pytest

from django_mcp.transports.security import accepts, allowed_hosts, host_is_allowed, media_types, origin_is_allowed


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("localhost", True),
        ("localhost:8000", True),
        ("127.0.0.1:9000", True),
        ("[::1]:8000", True),
        ("testserver", True),
        ("evil.example", False),
        ("localhost.evil.example", False),
        ("127.0.0.1.nip.io", False),
        ("", False),
        (None, False),
        ("bad host", False),
    ],
)
def test_host_is_checked_against_allowed_hosts(host, allowed):
    assert host_is_allowed(host) is allowed


def test_debug_allows_localhost_without_allowed_hosts(settings):
    settings.ALLOWED_HOSTS = []
    settings.DEBUG = True
    assert allowed_hosts() == [".localhost", "127.0.0.1", "[::1]"]
    assert host_is_allowed("localhost:8000")
    assert host_is_allowed("app.localhost")
    assert not host_is_allowed("example.com")
    settings.DEBUG = False
    assert not host_is_allowed("localhost")


def test_wildcard_subdomains(settings):
    settings.ALLOWED_HOSTS = [".example.com"]
    assert host_is_allowed("api.example.com")
    assert host_is_allowed("example.com:443")
    assert not host_is_allowed("example.org")


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # non-browser clients send none
        ("http://localhost:3000", True),
        ("https://127.0.0.1", True),
        ("http://[::1]:6274", True),
        ("https://evil.example", False),
        ("http://localhost.evil.example", False),
        ("null", False),
        ("file://", False),
        ("chrome-extension://abc", False),
        ("localhost", False),
        ("", False),
    ],
)
def test_origin(origin, allowed):
    assert origin_is_allowed(origin) is allowed


def test_allowed_origins_setting(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "ALLOWED_ORIGINS": ["https://claude.ai"]}
    assert origin_is_allowed("https://claude.ai")
    assert not origin_is_allowed("https://claude.ai.evil.example")
    assert not origin_is_allowed("https://evil.example")


def test_origin_follows_allowed_hosts_changes(settings):
    assert not origin_is_allowed("https://app.example.com")
    settings.ALLOWED_HOSTS = ["app.example.com"]
    assert origin_is_allowed("https://app.example.com")


def test_media_types():
    assert media_types(None) == []
    assert media_types("") == []
    assert media_types("Application/JSON; charset=utf-8") == ["application/json"]
    assert media_types("application/json, text/event-stream;q=0.9, ") == ["application/json", "text/event-stream"]


@pytest.mark.parametrize(
    ("header", "json", "sse"),
    [
        ("application/json, text/event-stream", True, True),
        ("text/event-stream,application/json", True, True),
        ("application/json", True, False),
        ("text/event-stream", False, True),
        ("*/*", True, True),
        ("application/*, text/*", True, True),
        ("text/html", False, False),
        (None, False, False),
        ("APPLICATION/JSON;q=1, Text/Event-Stream", True, True),
    ],
)
def test_accepts(header, json, sse):
    assert accepts(header, "application/json") is json
    assert accepts(header, "text/event-stream") is sse
