"""
Host/Origin checks and content negotiation (MCP spec 2025-11-25, basic/transports#security-warning
and #streamable-http; MCP security best practices, "DNS rebinding").
"""

import pytest

from django_mcp.transports import security
from django_mcp.transports.security import (accepts, allowed_hosts, host_is_allowed, media_types, normalise_origin,
                                            origin_is_allowed)


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


def test_remembered_host_decisions_stay_bounded_and_right(settings):
    settings.ALLOWED_HOSTS = ["good.example"]
    for number in range(3 * security.HOST_DECISIONS_KEPT):  # a client sending a new Host each time
        assert not host_is_allowed(f"h{number}.evil.example")
        assert len(security._host_decisions) <= security.HOST_DECISIONS_KEPT
    assert host_is_allowed("good.example:8000")
    settings.ALLOWED_HOSTS = ["other.example"]  # a settings change forgets what was decided
    assert not host_is_allowed("good.example:8000")


def test_wildcard_subdomains(settings):
    settings.ALLOWED_HOSTS = [".example.com"]
    assert host_is_allowed("api.example.com")
    assert host_is_allowed("example.com:443")
    assert not host_is_allowed("example.org")


LOOPBACK_SERVER = ("127.0.0.1", 8000)


@pytest.mark.parametrize(
    ("value", "normalised"),
    [
        ("http://localhost:3000", "http://localhost:3000"),
        ("HTTPS://App.Example.COM", "https://app.example.com"),
        ("https://app.example.com:443", "https://app.example.com"),
        ("http://app.example.com:80", "http://app.example.com"),
        ("http://app.example.com:443", "http://app.example.com:443"),
        ("http://[::1]:6274", "http://[::1]:6274"),
        ("http://[::1]:80", "http://[::1]"),
        ("http://app.example.com/", None),  # an Origin header has no path
        ("http://app.example.com?x=1", None),
        ("http://user@app.example.com", None),
        ("http://app.example.com:99999", None),
        ("http://app.example.com:port", None),
        (" http://app.example.com", None),
        ("null", None),
        ("file://", None),
        ("chrome-extension://abc", None),
        ("localhost", None),
        ("", None),
        (None, None),
    ],
)
def test_normalise_origin(value, normalised):
    assert normalise_origin(value) == normalised


def test_settings_are_normalised_leniently():
    assert normalise_origin("https://Claude.ai/", lenient=True) == "https://claude.ai"
    assert normalise_origin("https://mcp.example.com:443/base/path", lenient=True) == "https://mcp.example.com"
    assert normalise_origin("*", lenient=True) is None
    assert normalise_origin(".example.com", lenient=True) is None


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # non-browser clients send none
        ("http://localhost", True),  # tests.settings: ALLOWED_HOSTS = 127.0.0.1, localhost, [::1], testserver
        ("https://127.0.0.1", True),
        ("http://[::1]", True),
        ("http://testserver", True),
        ("http://localhost:3000", False),  # another port is another origin (no loopback request here)
        ("https://evil.example", False),
        ("http://localhost.evil.example", False),
        ("http://127.0.0.1.nip.io", False),
        ("null", False),
        ("file://", False),
        ("chrome-extension://abc", False),
        ("localhost", False),
        ("", False),
    ],
)
def test_origin_without_request_context(origin, allowed):
    assert origin_is_allowed(origin) is allowed


def test_scheme_and_port_must_match_exactly(settings):
    """Regression: only the Origin's hostname used to be checked, whatever its scheme and port."""
    settings.ALLOWED_HOSTS = ["app.example.com"]
    assert origin_is_allowed("https://app.example.com")
    assert origin_is_allowed("http://app.example.com")
    assert origin_is_allowed("https://app.example.com:443")
    assert not origin_is_allowed("https://app.example.com:8443")
    assert not origin_is_allowed("http://app.example.com:8080")
    assert not origin_is_allowed("ftp://app.example.com")
    assert not origin_is_allowed("wss://app.example.com")


def test_wildcard_allowed_hosts_trusts_no_origin(settings):
    """Regression: ``ALLOWED_HOSTS = ["*"]`` used to let every Origin in, DNS rebinding included."""
    settings.ALLOWED_HOSTS = ["*"]
    assert host_is_allowed("rebind.example:8000")  # the Host check is Django's: anything goes
    # A rebinding page: its Origin equals the Host it reached, and the socket is on loopback.
    assert not origin_is_allowed("http://rebind.example:8000", "rebind.example:8000", "http", LOOPBACK_SERVER)
    assert not origin_is_allowed("https://evil.example")
    assert not origin_is_allowed("http://localhost:3000", "rebind.example:8000", "http", LOOPBACK_SERVER)


def test_subdomain_patterns_trust_no_origin(settings):
    """Regression: a ``.example.com`` entry used to trust every subdomain's Origin, and its own Host's."""
    settings.ALLOWED_HOSTS = [".example.com"]
    assert host_is_allowed("api.example.com")
    assert not origin_is_allowed("https://api.example.com", "api.example.com", "https")
    assert not origin_is_allowed("https://example.com")
    assert not origin_is_allowed("https://evil.example.com")


def test_same_origin_needs_an_exact_host(settings):
    """A page served by this server (Origin == scheme://Host) is trusted when that Host is listed exactly."""
    settings.ALLOWED_HOSTS = ["app.example.com", ".example.org"]
    assert origin_is_allowed("https://app.example.com:8443", "app.example.com:8443", "https")
    assert origin_is_allowed("https://APP.example.com:8443", "app.example.com:8443", "https")
    assert origin_is_allowed("http://app.example.com", "app.example.com:80", "http")
    assert not origin_is_allowed("https://app.example.com:8443", "app.example.com:8443", "http")
    assert not origin_is_allowed("https://app.example.com:9000", "app.example.com:8443", "https")
    assert not origin_is_allowed("https://www.example.org:8443", "www.example.org:8443", "https")


def test_public_base_url_is_an_own_origin(settings):
    settings.ALLOWED_HOSTS = ["*"]
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "PUBLIC_BASE_URL": "https://mcp.example.com/"}
    assert origin_is_allowed("https://mcp.example.com", "10.0.0.7:8000", "http")
    assert not origin_is_allowed("http://mcp.example.com")
    assert not origin_is_allowed("https://mcp.example.com:8443")


def test_allowed_origins_setting(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "ALLOWED_ORIGINS": ["https://claude.ai", "*", ".example.com"]}
    assert origin_is_allowed("https://claude.ai")
    assert origin_is_allowed("https://claude.ai:443")
    assert not origin_is_allowed("http://claude.ai")
    assert not origin_is_allowed("https://claude.ai:8443")
    assert not origin_is_allowed("https://claude.ai.evil.example")
    assert not origin_is_allowed("https://evil.example")  # "*" is no origin
    assert not origin_is_allowed("https://api.example.com")


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000"])
@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:6274", True),  # the MCP Inspector
        ("http://127.0.0.1:3000", True),
        ("http://127.0.0.2:3000", True),
        ("https://localhost:5173", True),
        ("http://[::1]:6274", True),
        ("http://app.localhost:3000", False),  # only literal loopback names
        ("http://localhost.evil.example", False),
        ("http://evil.example:8000", False),
    ],
)
def test_loopback_origins_on_a_loopback_request(host, origin, allowed):
    assert origin_is_allowed(origin, host, "http", LOOPBACK_SERVER) is allowed
    assert origin_is_allowed(origin, host, "http", ["::1", 8000]) is allowed


def test_loopback_origins_need_a_loopback_host_and_socket(settings):
    settings.ALLOWED_HOSTS = ["mcp.example.com", "127.0.0.1"]
    # Reached on a public address (the server is not bound to loopback only).
    assert not origin_is_allowed("http://localhost:6274", "127.0.0.1:8000", "http", ("10.0.0.7", 8000))
    # A proxy on this machine forwarding a public Host.
    assert not origin_is_allowed("http://localhost:6274", "mcp.example.com", "http", LOOPBACK_SERVER)
    # Unknown server address, or a Unix socket.
    assert not origin_is_allowed("http://localhost:6274", "127.0.0.1:8000", "http", None)
    assert not origin_is_allowed("http://localhost:6274", "127.0.0.1:8000", "http", ("/run/mcp.sock", None))


def test_localhost_development_with_debug(settings):
    settings.ALLOWED_HOSTS = []
    settings.DEBUG = True
    assert origin_is_allowed("http://localhost:8000", "localhost:8000", "http", LOOPBACK_SERVER)
    assert origin_is_allowed("http://127.0.0.1:8000", "127.0.0.1:8000", "http", LOOPBACK_SERVER)
    assert origin_is_allowed("http://localhost:6274", "localhost:8000", "http", LOOPBACK_SERVER)
    assert not origin_is_allowed("http://evil.example:8000", "localhost:8000", "http", LOOPBACK_SERVER)


def test_origin_follows_allowed_hosts_changes(settings):
    assert not origin_is_allowed("https://app.example.com")
    settings.ALLOWED_HOSTS = ["app.example.com"]
    assert origin_is_allowed("https://app.example.com")
    settings.ALLOWED_HOSTS = ["*"]
    assert not origin_is_allowed("https://app.example.com")


def test_media_types():
    assert media_types(None) == ()
    assert media_types("") == ()
    assert media_types("Application/JSON; charset=utf-8") == ("application/json",)
    assert media_types("application/json, text/event-stream;q=0.9, ") == ("application/json", "text/event-stream")


def test_long_media_type_headers_are_parsed_the_same_without_the_cache():
    header = "application/json, " + ", ".join(f"x-type/n{i}" for i in range(40)) + ", Text/Event-Stream;q=0.1"
    assert len(header) > 256
    parsed = media_types(header)
    assert parsed[0] == "application/json" and parsed[-1] == "text/event-stream" and len(parsed) == 42
    assert accepts(header, "text/event-stream") and not accepts(header, "text/html")


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
