"""
CORS at the HTTP endpoints (Fetch standard, "CORS protocol") and the Origin rules it meets (MCP spec
2025-11-25, basic/transports#security-warning): preflights before authentication at ``/mcp``, ``/sse``
and ``/messages/``; CORS headers on every answer to an allowed page; the allow-list's sources; the
OAuth metadata preflights. In process, with a full ASGI scope (a loopback ``server``, as daphne gives);
and live, daphne with ``ALLOWED_HOSTS = ["*"]`` through :data:`wildcard_hosts_application` (daphne
imports this module before Django is set up, so nothing from Django is imported at the top).
"""

import http.client
import json
import sys
from typing import Any, NamedTuple

import pytest
from asgiref.testing import ApplicationCommunicator


MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
LOOPBACK_SERVER = ("127.0.0.1", 8000)
INSPECTOR = "http://localhost:6274"
LISTED = "https://inspector.example"
EVIL = "https://evil.example"
MCP_REQUEST_HEADERS = "content-type,mcp-method,mcp-name,mcp-param-city,mcp-protocol-version"


class Answer(NamedTuple):
    """An HTTP answer: status, headers (lower-case names, repeated ones joined with ", "), body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @classmethod
    def of(cls, status: int, headers: Any, body: bytes) -> "Answer":
        names: dict[str, str] = {}
        for name, value in headers:
            if isinstance(name, bytes):
                name, value = name.decode("latin-1"), value.decode("latin-1")
            names[name.lower()] = f"{names[name.lower()]}, {value}" if name.lower() in names else value
        return cls(status, names, body)

    def cors(self) -> dict[str, str]:
        return {name: value for name, value in self.headers.items() if name.startswith("access-control-")}


def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> tuple[dict[str, str], bytes]:
    """The headers and body of a 2026-07-28 ``tools/call``."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": {**META, **(meta or {})}}}
    return ({"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}, json.dumps(body).encode())


# In process ----------------------------------------------------------------------------------


def build_site() -> Any:
    from django_mcp.context import Context
    from django_mcp.sites import McpSite

    site = McpSite("cors-tests")

    @site.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @site.tool()
    async def steps(count: int, ctx: Context) -> str:
        """Report progress, which turns the answer into an SSE stream."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
        return f"done {count}"

    return site


@pytest.fixture(scope="module")
def app() -> Any:
    import django_mcp.asgi

    async def not_found(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return django_mcp.asgi.application(not_found, site=build_site())


def mcp_settings(settings: Any, **values: Any) -> None:
    """Change DJANGO_MCP entries for one test (pytest-django restores them)."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, **values}


async def exchange(app: Any, method: str, path: str, headers: dict[str, str], body: bytes = b"", *,
                   host: str = "127.0.0.1:8000", server: Any = LOOPBACK_SERVER, timeout: float = 5) -> Answer:
    raw_headers = [(b"host", host.encode())] + [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": raw_headers,
             "server": server, "client": ("127.0.0.1", 50000)}
    communicator = ApplicationCommunicator(app, scope)
    try:
        await communicator.send_input({"type": "http.request", "body": body, "more_body": False})
        start = await communicator.receive_output(timeout)
        assert start["type"] == "http.response.start", start
        chunks = []
        while True:
            message = await communicator.receive_output(timeout)
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
    finally:
        communicator.stop(exceptions=False)
    return Answer.of(start["status"], start["headers"], b"".join(chunks))


def preflight(app: Any, origin: str, path: str = "/mcp", method: str = "POST",
              requested: str | None = MCP_REQUEST_HEADERS, **kwargs: Any) -> Any:
    headers = {"Origin": origin, "Access-Control-Request-Method": method}
    if requested is not None:
        headers["Access-Control-Request-Headers"] = requested
    return exchange(app, "OPTIONS", path, headers, **kwargs)


def tool_call(app: Any, name: str, arguments: dict[str, Any], headers: dict[str, str] | None = None,
              meta: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    call_headers, body = call(name, arguments, meta)
    return exchange(app, "POST", "/mcp", {**call_headers, **(headers or {})}, body, **kwargs)


def assert_cors_for(answer: Answer, origin: str) -> None:
    assert answer.headers.get("access-control-allow-origin") == origin, answer
    assert "Origin" in answer.headers.get("vary", ""), answer
    exposed = {name.strip().lower() for name in answer.headers["access-control-expose-headers"].split(",")}
    assert exposed == {"mcp-session-id", "www-authenticate", "mcp-protocol-version"}
    assert "access-control-allow-credentials" not in answer.headers


@pytest.mark.parametrize("path, methods", [("/mcp", "GET, POST, DELETE"), ("/sse", "GET"), ("/messages/", "POST")])
async def test_preflight_is_answered_before_authentication(app, settings, path, methods):
    """Regression: a browser's preflight used to get 405 (and, with authentication required, 401)."""
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED], REQUIRE_AUTHENTICATION=True)
    answer = await preflight(app, LISTED, path)
    assert answer.status == 204 and answer.body == b"", answer
    assert answer.cors() == {
        "access-control-allow-origin": LISTED,
        "access-control-allow-methods": methods,
        "access-control-allow-headers": MCP_REQUEST_HEADERS.replace(",", ", "),
        "access-control-max-age": "7200",
    }
    assert answer.headers["vary"] == "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
    assert "www-authenticate" not in answer.headers


async def test_preflight_echoes_only_the_mcp_request_headers(app, settings):
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED])
    requested = ("Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, "
                 "Mcp-Method, Mcp-Name, Mcp-Param-City, Mcp-Param-, Cookie, X-Evil, bad header")
    answer = await preflight(app, LISTED, requested=requested)
    assert answer.status == 204 and answer.headers["access-control-allow-headers"] == (
        "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, "
        "mcp-name, mcp-param-city")
    answer = await preflight(app, LISTED, requested=None)
    assert answer.status == 204 and "access-control-allow-headers" not in answer.headers


async def test_preflight_max_age_follows_the_setting(app, settings):
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED], CORS_MAX_AGE=60)
    assert (await preflight(app, LISTED)).headers["access-control-max-age"] == "60"
    mcp_settings(settings, CORS_MAX_AGE=None)
    assert "access-control-max-age" not in (await preflight(app, LISTED)).headers


@pytest.mark.parametrize(("origin", "host", "status"), [
    (EVIL, "127.0.0.1:8000", 403),
    ("null", "127.0.0.1:8000", 403),
    (f"{LISTED}:8443", "127.0.0.1:8000", 403),
    ("http://inspector.example", "127.0.0.1:8000", 403),
    (f"{LISTED}/", "127.0.0.1:8000", 403),
    ("http://testserver", "127.0.0.1:8000", 403),  # an own origin, trusted, but not listed for CORS
    (LISTED, "evil.example", 421),  # the Host check comes first
])
async def test_preflight_refused(app, settings, origin, host, status):
    """A refused preflight carries no CORS headers, so the browser refuses the request."""
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED])
    answer = await preflight(app, origin, host=host)
    assert answer.status == status, answer
    assert answer.cors() == {} and "vary" not in answer.headers
    assert json.loads(answer.body)["error"]["code"] == -32600


async def test_options_without_preflight_headers_is_not_a_preflight(app, settings):
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED])
    answer = await exchange(app, "OPTIONS", "/mcp", {"Origin": LISTED})
    assert answer.status == 405 and "access-control-allow-methods" not in answer.headers


async def test_allowed_origin_gets_cors_headers_on_json_and_sse(app, settings):
    """Listed for CORS alone (not in ALLOWED_ORIGINS) is enough: a passed preflight is not followed by a 403."""
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED], ALLOWED_ORIGINS=[])
    answer = await tool_call(app, "echo", {"text": "hi"}, {"Origin": LISTED})
    assert answer.status == 200, answer
    assert json.loads(answer.body)["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert_cors_for(answer, LISTED)
    answer = await tool_call(app, "steps", {"count": 2}, {"Origin": LISTED}, {"progressToken": "p"})
    assert answer.status == 200 and answer.headers["content-type"].startswith("text/event-stream")
    assert b"done 2" in answer.body
    assert_cors_for(answer, LISTED)


async def test_allowed_origin_gets_cors_headers_on_a_401(app, settings):
    """Browser OAuth clients read the challenge: the 401 is readable and WWW-Authenticate exposed."""
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED], REQUIRE_AUTHENTICATION=True)
    answer = await tool_call(app, "echo", {"text": "hi"}, {"Origin": LISTED})
    assert answer.status == 401 and answer.headers["www-authenticate"], answer
    assert_cors_for(answer, LISTED)


@pytest.mark.parametrize(("method", "headers", "status"), [
    ("GET", {"Accept": "text/event-stream"}, 405),  # no session
    ("POST", {"Content-Type": "text/plain", "Accept": "application/json, text/event-stream"}, 415),
    ("PUT", {}, 405),
])
async def test_allowed_origin_gets_cors_headers_on_errors(app, settings, method, headers, status):
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED])
    answer = await exchange(app, method, "/mcp", {"Origin": LISTED, **headers}, b"{}")
    assert answer.status == status, answer
    assert_cors_for(answer, LISTED)


@pytest.mark.parametrize(("headers", "host", "status"), [
    ({}, "127.0.0.1:8000", 200),  # no Origin (non-browser clients): nothing added
    ({"Origin": "http://testserver"}, "testserver", 200),  # a same-origin page needs no CORS
    ({"Origin": EVIL}, "127.0.0.1:8000", 403),
])
async def test_answers_without_cors_headers(app, settings, headers, host, status):
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[LISTED])
    answer = await tool_call(app, "echo", {"text": "x"}, headers, host=host)
    assert answer.status == status, answer
    assert answer.cors() == {} and "vary" not in answer.headers


async def test_allowed_origins_is_the_default_cors_list(app, settings):
    mcp_settings(settings, ALLOWED_ORIGINS=[LISTED])
    assert (await preflight(app, LISTED)).status == 204
    assert (await preflight(app, EVIL)).status == 403


async def test_loopback_pages_on_a_loopback_server_by_default(app, settings):
    """The MCP Inspector (http://localhost:6274) against a server on 127.0.0.1: allowed by default."""
    answer = await preflight(app, INSPECTOR)
    assert answer.status == 204 and answer.headers["access-control-allow-origin"] == INSPECTOR
    answer = await tool_call(app, "echo", {"text": "inspected"}, {"Origin": INSPECTOR})
    assert answer.status == 200
    assert_cors_for(answer, INSPECTOR)
    # Not when the request came in on a public address, nor once the list is set explicitly.
    assert (await preflight(app, INSPECTOR, server=("10.0.0.7", 8000))).status == 403
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=[])
    assert (await preflight(app, INSPECTOR)).status == 403


async def test_wildcard_allowed_hosts_refuses_a_rebinding_page(app, settings):
    """Regression: with ALLOWED_HOSTS = ["*"] a page whose Origin equals its (rebound) Host was served."""
    settings.ALLOWED_HOSTS = ["*"]
    origin, host = "http://rebind.example:8000", "rebind.example:8000"
    answer = await tool_call(app, "echo", {"text": "stolen"}, {"Origin": origin}, host=host)
    assert answer.status == 403 and answer.cors() == {}
    assert (await preflight(app, origin, host=host)).status == 403
    # Non-browser clients, which send no Origin, are unaffected.
    assert (await tool_call(app, "echo", {"text": "cli"}, host=host)).status == 200


@pytest.fixture
def corsheaders_installed(tmp_path, monkeypatch, settings):
    """
    django-cors-headers is not a dependency: an empty package of that name stands in for it, so
    the app registry lists ``corsheaders``; django_mcp reads only its settings, never its code.
    """
    (tmp_path / "corsheaders").mkdir()
    (tmp_path / "corsheaders" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, "corsheaders"]
    yield
    sys.modules.pop("corsheaders", None)


async def test_django_cors_headers_settings_are_reused(app, settings, corsheaders_installed):
    mcp_settings(settings, ALLOWED_ORIGINS=[EVIL])  # ignored for CORS while corsheaders is installed
    settings.CORS_ALLOWED_ORIGINS = [LISTED]
    settings.CORS_ALLOWED_ORIGIN_REGEXES = [r"^https://\w+\.inspector\.example$"]
    assert (await preflight(app, LISTED)).status == 204
    assert (await preflight(app, "https://beta.inspector.example")).status == 204
    answer = await tool_call(app, "echo", {"text": "x"}, {"Origin": "https://beta.inspector.example"})
    assert answer.status == 200
    assert_cors_for(answer, "https://beta.inspector.example")
    assert (await preflight(app, "https://beta.inspector.example.evil")).status == 403
    assert (await preflight(app, EVIL)).status == 403
    # DJANGO_MCP["CORS_ALLOWED_ORIGINS"] wins over django-cors-headers' settings.
    mcp_settings(settings, CORS_ALLOWED_ORIGINS=["https://only.example"])
    assert (await preflight(app, LISTED)).status == 403
    assert (await preflight(app, "https://only.example")).status == 204


async def test_django_cors_headers_allow_all_is_not_honoured(app, settings, corsheaders_installed):
    settings.CORS_ALLOW_ALL_ORIGINS = True
    settings.CORS_ALLOWED_ORIGINS = ["*"]
    assert (await preflight(app, EVIL)).status == 403
    assert (await tool_call(app, "echo", {"text": "x"}, {"Origin": EVIL})).status == 403


# OAuth metadata documents ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                                  "/.well-known/oauth-authorization-server"])
def test_metadata_documents_answer_preflights(client, path):
    """Public documents: ``*`` on the document (as DOT serves it) and on its preflight."""
    answer = client.options(path, HTTP_ORIGIN=EVIL, HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
                            HTTP_ACCESS_CONTROL_REQUEST_HEADERS="mcp-protocol-version")
    assert answer.status_code == 200
    assert answer["Access-Control-Allow-Origin"] == "*"
    assert answer["Access-Control-Allow-Methods"] == "GET, OPTIONS"
    assert answer["Access-Control-Allow-Headers"] == "mcp-protocol-version"
    assert answer["Access-Control-Max-Age"] == "7200"
    assert "Access-Control-Request-Headers" in answer["Vary"]
    document = client.get(path, HTTP_ORIGIN=EVIL)
    assert document.status_code == 200 and document["Access-Control-Allow-Origin"] == "*"


# Over real sockets ----------------------------------------------------------------------------


class WildcardHostsApplication:
    """``tests.asgi``'s application with ``ALLOWED_HOSTS = ["*"]``, set in the live server's process only."""

    def __init__(self) -> None:
        self.application: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.application is None:
            import tests.asgi
            from django.conf import settings

            settings.ALLOWED_HOSTS = ["*"]
            self.application = tests.asgi.application
        await self.application(scope, receive, send)


wildcard_hosts_application = WildcardHostsApplication()


@pytest.fixture(scope="module")
def wildcard_server(sqlite_server_env):
    from tests.live import LiveServer

    with LiveServer("tests.transports.test_cors:wildcard_hosts_application", env=sqlite_server_env,
                    name="cors-wildcard") as server:
        yield server


def live_request(server: Any, method: str, headers: dict[str, str], body: bytes | None = None) -> Answer:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        connection.request(method, "/mcp", body=body, headers={"Host": server.host_header, **headers})
        response = connection.getresponse()
        return Answer.of(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def test_live_browser_preflight_and_call_with_wildcard_hosts(wildcard_server):
    """
    Over real sockets, ``ALLOWED_HOSTS = ["*"]``: the MCP Inspector's page (a loopback origin) gets
    its preflight and its call answered; a rebinding page, whose Origin is its own Host, is refused.
    """
    server = wildcard_server
    answer = live_request(server, "OPTIONS", {"Origin": INSPECTOR, "Access-Control-Request-Method": "POST",
                                              "Access-Control-Request-Headers": MCP_REQUEST_HEADERS})
    assert answer.status == 204, answer
    assert answer.headers["access-control-allow-origin"] == INSPECTOR
    assert "POST" in answer.headers["access-control-allow-methods"]
    assert answer.headers["access-control-allow-headers"] == MCP_REQUEST_HEADERS.replace(",", ", ")

    call_headers, body = call("echo", {"text": "from a page"})
    answer = live_request(server, "POST", {**call_headers, "Origin": INSPECTOR}, body)
    assert answer.status == 200, answer
    assert json.loads(answer.body)["result"]["content"][0]["text"] == "from a page"
    assert_cors_for(answer, INSPECTOR)

    rebound = f"rebind.example:{server.port}"
    answer = live_request(server, "POST", {**call_headers, "Host": rebound, "Origin": f"http://{rebound}"}, body)
    assert answer.status == 403 and answer.cors() == {}, answer
    answer = live_request(server, "OPTIONS", {"Host": rebound, "Origin": f"http://{rebound}",
                                              "Access-Control-Request-Method": "POST"})
    assert answer.status == 403 and answer.cors() == {}
    # "*" lets any Host in: a client without Origin is served whatever Host it names.
    answer = live_request(server, "POST", {**call_headers, "Host": rebound}, body)
    assert answer.status == 200, answer
