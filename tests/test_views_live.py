"""
The plain view (``django_mcp.views.McpView``) on real servers, with the official SDK client:

- gunicorn, sync workers and gthread workers, two processes each (``tests/wsgi.py``): WSGI, so
  every POST gets one JSON answer (the module docstring of ``django_mcp.views``);
- uvicorn (httptools, uvloop) running Django's own ASGI handler without Channels' routing
  (``tests/django_asgi.py``): the view holds streams as the Channels endpoint does.

The SDK interoperability tests of the Channels endpoint (``tests/transports/test_http_sdk_client.py``)
run here again, on every server, in every client mode. Under WSGI those that need a stream beside
the answer — progress, logging, a legacy client asked for input, change notifications — are left
out, each with its reason, and the tests below check what WSGI does instead, as the spec allows it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError

from tests.live import GunicornServer, LiveServer, UvicornServer, all_started
from tests.transports import test_http_sdk_client as sdk
from tests.transports.test_http_sdk_client import (  # noqa: F401  (collected here, against the plain view)
    test_call_echo,
    test_call_structured_output,
    test_completion,
    test_elicitation,
    test_elicitation_declined,
    test_elicitation_needs_the_client_capability,
    test_get_prompt,
    test_get_prompt_missing_required_argument,
    test_list_resources_and_templates,
    test_list_tools,
    test_logging_with_opt_in,
    test_logging_without_opt_in_is_silent_in_2026,
    test_progress_notifications,
    test_protocol_version_negotiated,
    test_read_resources,
    test_roots,
    test_sampling,
    test_tool_failure_is_a_result_not_an_error,
    test_tools_list_changed_reaches_the_client,
    test_unknown_tool_is_a_protocol_error,
)


pytestmark = pytest.mark.live

SERVERS = ["gunicorn-sync", "gunicorn-gthread", "uvicorn"]
WSGI = {"gunicorn-sync", "gunicorn-gthread"}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

# What a WSGI server cannot serve, by test and client era, and why (MCP spec 2025-11-25,
# basic/transports#streamable-http: progress, log messages and server requests travel on an SSE
# response or the GET stream; MCP spec 2026-07-28, basic/transports/streamable-http: progress, log
# messages and listen notifications travel on an SSE response). The tests further down check what
# is answered instead.
NEEDS_A_STREAM = {
    ("test_progress_notifications", "legacy"): "progress travels on an SSE response",
    ("test_progress_notifications", "modern"): "progress travels on an SSE response",
    ("test_logging_with_opt_in", "legacy"): "log messages travel beside the answer; logging is not offered",
    ("test_logging_with_opt_in", "modern"): "log messages travel on an SSE response",
    ("test_elicitation", "legacy"): "a legacy client is asked on a stream",
    ("test_elicitation_declined", "legacy"): "a legacy client is asked on a stream",
    ("test_sampling", "legacy"): "a legacy client is asked on a stream",
    ("test_roots", "legacy"): "a legacy client is asked on a stream",
    ("test_tools_list_changed_reaches_the_client", "legacy"): "a GET stream needs a held connection",
    ("test_tools_list_changed_reaches_the_client", "modern"): "subscriptions/listen needs a held connection",
}


@pytest.fixture(scope="module")
def plain_servers(sqlite_server_env: Mapping[str, str]) -> Iterator[dict[str, LiveServer]]:
    """The three servers, started together (each takes a second or two) and shared by the module."""
    with all_started({
        "gunicorn-sync": GunicornServer(env=sqlite_server_env, worker_class="sync", workers=2),
        "gunicorn-gthread": GunicornServer(env=sqlite_server_env, worker_class="gthread", workers=2),
        "uvicorn": UvicornServer(env=sqlite_server_env),
    }) as servers:
        yield dict(servers)


@pytest.fixture(params=SERVERS)
def server_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=sdk.MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def url(request: pytest.FixtureRequest, plain_servers: dict[str, LiveServer], server_name: str, mode: str) -> str:
    era = "modern" if mode in sdk.MODERN_MODES else "legacy"
    reason = NEEDS_A_STREAM.get((request.node.originalname, era))
    if server_name in WSGI and reason is not None:
        pytest.skip(reason=f"not served under WSGI: {reason} (the test_wsgi_* tests check what is answered instead)")
    return plain_servers[server_name].mcp_url


@pytest.fixture
def wsgi_url(plain_servers: dict[str, LiveServer], server_name: str) -> str:
    if server_name not in WSGI:
        pytest.skip(reason="a WSGI server's answers: the ASGI server holds streams")
    return plain_servers[server_name].mcp_url


def _post(url: str, body: Any, headers: Mapping[str, str] | None = None, **options: Any) -> httpx2.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(url, content=data, headers={**HEADERS, **(headers or {})}, timeout=20, **options)


def _initialize(url: str, version: str = "2025-11-25") -> str:
    answer = _post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "plain-view-tests", "version": "1"}}})
    assert answer.status_code == 200, answer.text
    return answer.headers["mcp-session-id"]


def _modern(method: str, params: dict[str, Any] | None = None, *, request_id: Any = 1) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}


def _modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


# --- what WSGI answers instead of a stream --------------------------------------------------------


async def test_wsgi_announces_no_capability_that_needs_a_stream(wsgi_url: str) -> None:
    """
    Capabilities (MCP spec 2025-11-25, basic/lifecycle#capability-negotiation): a server that can
    send nothing but answers announces no ``listChanged``, ``subscribe`` or ``logging``, in either
    era; tools, resources and prompts are served all the same.
    """
    for mode in ("legacy", "auto"):  # auto reads server/discover; a pinned 2026-07-28 client reads nothing
        async with asyncio.timeout(20):
            async with Client(wsgi_url, mode=mode) as client:
                assert client.protocol_version == sdk.EXPECTED_VERSION[mode]
                capabilities = client.server_capabilities
                assert capabilities is not None
                assert capabilities.tools is not None and not capabilities.tools.list_changed
                assert capabilities.prompts is not None and not capabilities.prompts.list_changed
                assert capabilities.resources is not None
                assert not capabilities.resources.list_changed and not capabilities.resources.subscribe
                assert capabilities.logging is None
                assert (await client.call_tool("echo", {"text": "still served"})).is_error is False


async def test_wsgi_progress_is_left_out_and_the_answer_comes(wsgi_url: str, mode: str) -> None:
    """A call that reports progress gets its answer as one JSON body; the progress is not sent."""
    updates: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(progress)

    async with asyncio.timeout(20):
        async with Client(wsgi_url, mode=mode) as client:
            result = await client.call_tool("slow_steps", {"steps": 3, "delay": 0.01}, progress_callback=on_progress)
    assert sdk.texts(result) == ["done 3 steps"]
    assert updates == []


async def test_wsgi_legacy_client_cannot_be_asked_but_2026_client_can(wsgi_url: str) -> None:
    """
    Input: a 2026-07-28 client is asked in the answer itself (``InputRequiredResult``, MCP spec
    2026-07-28, basic/patterns/mrtr), which WSGI serves; a legacy client would be asked by a
    request on a stream, so the tool's call fails with an error saying so, never a hang.
    """
    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with asyncio.timeout(20):
        async with Client(wsgi_url, mode="2026-07-28", elicitation_callback=on_elicit) as client:
            assert sdk.texts(await client.call_tool("ask_name", {})) == ["Hello, Ada!"]
        async with Client(wsgi_url, mode="legacy", elicitation_callback=on_elicit) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("ask_name", {})
    assert "cannot ask a 2025-11-25 client for input" in refused.value.error.message


def test_wsgi_refuses_the_get_stream_with_405(wsgi_url: str) -> None:
    """
    A server that offers no stream answers GET with 405 (MCP spec 2025-11-25,
    basic/transports#listening-for-messages-from-the-server), naming what it serves.
    """
    session_id = _initialize(wsgi_url)
    answer = httpx2.get(wsgi_url, headers={"accept": "text/event-stream", "mcp-session-id": session_id,
                                           "mcp-protocol-version": "2025-11-25"}, timeout=10)
    assert answer.status_code == 405
    assert answer.headers["allow"] == "POST, DELETE"
    assert answer.json()["error"]["code"] == -32600


def test_wsgi_answers_listen_as_a_method_it_does_not_serve(wsgi_url: str) -> None:
    """
    ``subscriptions/listen`` needs a response held open: under WSGI it is a method not served
    here, -32601 with HTTP 404 (MCP spec 2026-07-28, basic/transports/streamable-http), at once.
    """
    answer = _post(wsgi_url, _modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
                   _modern_headers("subscriptions/listen"))
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]["code"] == -32601


# --- every server --------------------------------------------------------------------------------


def test_a_session_is_served_by_every_worker(plain_servers: dict[str, LiveServer], server_name: str) -> None:
    """
    Sessions live in the database and signed ids (MCP spec 2025-11-25, basic/transports#session-management):
    any process serves any request of a session, from the first one after ``initialize`` on, with no
    sticky routing; after DELETE, every process answers 404.
    """
    url = plain_servers[server_name].mcp_url
    for _ in range(3):
        session = {"mcp-session-id": _initialize(url), "mcp-protocol-version": "2025-11-25"}
        for request_id in range(2, 14):
            answer = _post(url, {"jsonrpc": "2.0", "id": request_id, "method": "ping"}, session)
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"jsonrpc": "2.0", "id": request_id, "result": {}}
        assert httpx2.delete(url, headers=session, timeout=10).status_code == 200
        for request_id in range(20, 26):
            gone = _post(url, {"jsonrpc": "2.0", "id": request_id, "method": "ping"}, session)
            assert gone.status_code == 404, gone.text


def test_bad_input_gets_its_status_and_the_server_serves_on(plain_servers: dict[str, LiveServer],
                                                           server_name: str) -> None:
    """
    Malformed JSON, a wrong media type, an oversized body, a foreign Host or Origin, an unknown
    credential, an unknown session: each its status and a JSON-RPC error, never a 500; then a
    good request is answered.
    """
    server = plain_servers[server_name]
    url = server.mcp_url
    malformed = _post(url, b"{not json")
    assert (malformed.status_code, malformed.json()["error"]["code"]) == (400, -32700)
    wrong_type = httpx2.post(url, content=b"{}", headers={"content-type": "text/plain",
                                                          "accept": HEADERS["accept"]}, timeout=10)
    assert wrong_type.status_code == 415
    oversized = _post(url, b"[" + b"1," * (5 * 1024 * 1024) + b"1]")
    assert oversized.status_code == 413 and oversized.json()["error"]
    foreign_host = _post(url, _modern("server/discover"), {**_modern_headers("server/discover"),
                                                           "host": "evil.example"})
    # Django's CommonMiddleware checks ALLOWED_HOSTS before any view runs: its own 400 page. The
    # view's check (421 with a JSON-RPC error) stands behind it for a project without that middleware.
    assert foreign_host.status_code == 400 and "Bad Request" in foreign_host.text
    foreign_origin = _post(url, _modern("server/discover"), {**_modern_headers("server/discover"),
                                                             "origin": "https://evil.example"})
    assert foreign_origin.status_code == 403 and "error" in foreign_origin.json()
    bad_key = _post(url, _modern("server/discover"), {**_modern_headers("server/discover"), "x-api-key": "nobody-key"})
    assert bad_key.status_code == 401 and bad_key.json()["error"]
    unknown_session = _post(url, {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                            {"mcp-session-id": uuid.uuid4().hex, "mcp-protocol-version": "2025-11-25"})
    assert unknown_session.status_code == 404
    missing_header = _post(url, _modern("tools/list"))  # no MCP-Protocol-Version / Mcp-Method
    assert missing_header.status_code == 400 and missing_header.json()["error"]["code"] == -32020

    good = _post(url, _modern("tools/list"), _modern_headers("tools/list"))
    assert good.status_code == 200 and good.json()["result"]["tools"]
    assert "Traceback" not in server.log_tail(200)


def test_a_client_that_leaves_mid_body_costs_the_server_nothing(plain_servers: dict[str, LiveServer],
                                                               server_name: str) -> None:
    """A body cut short by a client that goes away: the worker is free again for the next request."""
    server = plain_servers[server_name]
    with socket.create_connection((server.host, server.port), timeout=5) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: " + server.host_header.encode()
                     + b"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                     + b"Content-Length: 1000\r\n\r\n{\"jsonrpc\"")
    for _ in range(4):  # both workers
        good = _post(server.mcp_url, _modern("tools/list"), _modern_headers("tools/list"))
        assert good.status_code == 200


def test_csrf_does_not_stop_a_client_and_origin_stops_a_page(plain_servers: dict[str, LiveServer],
                                                            server_name: str) -> None:
    """
    The project's CsrfViewMiddleware runs (tests.settings) yet refuses no MCP client, which sends
    no CSRF cookie; a browser page of another origin is refused by the Origin check instead
    (MCP spec 2025-11-25, basic/transports#security-warning), and a loopback page is let in.
    """
    url = plain_servers[server_name].mcp_url
    discover = (_modern("server/discover"), _modern_headers("server/discover"))
    assert _post(url, discover[0], discover[1]).status_code == 200
    loopback_page = _post(url, discover[0], {**discover[1], "origin": f"http://{plain_servers[server_name].host_header}"})
    assert loopback_page.status_code == 200
    assert _post(url, discover[0], {**discover[1], "origin": "https://evil.example"}).status_code == 403


async def test_listen_on_the_asgi_server_is_a_stream(plain_servers: dict[str, LiveServer]) -> None:
    """
    Under Django's ASGI handler the view holds a ``subscriptions/listen`` stream: acknowledged,
    then each change notification as it happens, stamped with the subscription id (MCP spec
    2026-07-28, basic/patterns/subscriptions); the stream ends when the client leaves.
    """
    url = plain_servers["uvicorn"].mcp_url
    async with asyncio.timeout(20):
        async with Client(url, mode="2026-07-28") as client:
            async with client.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed is True
                for _ in range(2):
                    assert (await client.call_tool("test_trigger_tool_change", {})).is_error is False
                    event = await anext(subscription)
                    assert isinstance(event, sdk.ToolsListChanged)
        # The server serves on once the stream is gone.
        async with Client(url, mode="2026-07-28") as client:
            assert sdk.texts(await client.call_tool("echo", {"text": "after"})) == ["after"]


def _database_files_open(pid: int) -> int:
    count = 0
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += "sqlite" in os.readlink(entry)
        except OSError:
            continue
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts open files through /proc (Linux)")
def test_the_asgi_server_opens_no_connection_per_request(plain_servers: dict[str, LiveServer]) -> None:
    """
    Django's ASGI handler runs each request in a thread-sensitive context of its own; the view's
    session reads do not follow it onto a new thread each (on SQLite, a new connection left open).
    """
    server = plain_servers["uvicorn"]
    session = {"mcp-session-id": _initialize(server.mcp_url), "mcp-protocol-version": "2025-11-25"}
    assert server.pid is not None
    before = _database_files_open(server.pid)
    with httpx2.Client(timeout=10) as http:
        for request_id in range(2, 122):
            answer = http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": request_id, "method": "ping"},
                               headers={**HEADERS, **session})
            assert answer.status_code == 200
    assert _database_files_open(server.pid) <= before + 2
