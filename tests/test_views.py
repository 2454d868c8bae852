"""
``django_mcp.views.McpView`` in process, through Django's own handlers: the test ``Client`` (the
WSGI path: a thread without an event loop hands the request to the process's loop) and the
``AsyncClient`` (the ASGI path: the view runs on the test's loop). The same view on real
gunicorn and uvicorn servers is ``tests/test_views_live.py``.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import iscoroutinefunction
from django.core.handlers.base import BaseHandler
from django.core.management import call_command
from django.db import connections
from django.test import AsyncClient, Client, override_settings
from django.urls import resolve

from django_mcp import fanout
from django_mcp.transports.portal import portal
from django_mcp.views import EndpointView, McpView


pytestmark = pytest.mark.django_db(transaction=True)

ACCEPT = {"accept": "application/json, text/event-stream"}
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(autouse=True)
def one_process_again(monkeypatch: pytest.MonkeyPatch, transactional_db: Any) -> Iterator[None]:
    """
    Serving the view says other processes may serve the site too (``fanout.expect_unconnected_workers``):
    put that back for the tests that run after these in this process, and stop the process's loop
    (writing what it owes) before the tables are emptied.
    """
    monkeypatch.setattr(fanout, "_unconnected_workers", False)
    yield
    # As at a worker's exit: what the loop owes is written, and no loop of this test's is left
    # running beside the next tests' (each of which runs its own).
    portal.stop()


def modern(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> str:
    params = dict(params or {})
    params["_meta"] = {**params.get("_meta", {}), **MODERN_META}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


def initialize(client: Client) -> str:
    answer = client.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}), content_type="application/json", headers=ACCEPT)
    assert answer.status_code == 200, answer.content
    return answer.headers["Mcp-Session-Id"]


# --- the callable Django is given ----------------------------------------------------------------


def test_as_view_gives_an_endpoint_view_that_django_resolves_to_mcp_view() -> None:
    match = resolve("/mcp")
    assert isinstance(match.func, EndpointView)
    assert match.func.view_class is McpView
    assert match.func.view_initkwargs == {}
    assert match._func_path == "django_mcp.views.McpView"


def test_the_view_is_sync_outside_an_event_loop() -> None:
    view = McpView.as_view()
    assert iscoroutinefunction(view) is False
    if sys.version_info >= (3, 12):
        assert inspect.iscoroutinefunction(view) is False


async def test_the_view_is_async_on_an_event_loop() -> None:
    view = McpView.as_view()
    assert iscoroutinefunction(view) is True
    if sys.version_info >= (3, 12):
        assert inspect.iscoroutinefunction(view) is True


def test_the_view_is_exempt_from_csrf_login_required_and_atomic_requests() -> None:
    view = McpView.as_view()
    assert view.csrf_exempt is True
    assert view.login_required is False
    assert view._non_atomic_requests == frozenset(connections)


def test_atomic_requests_leaves_the_view_as_it_is() -> None:
    """With ATOMIC_REQUESTS on every database, Django wraps no transaction around the view, nor refuses it."""
    view = McpView.as_view()
    for alias in connections:
        connections.settings[alias]["ATOMIC_REQUESTS"] = True
    try:
        assert BaseHandler().make_view_atomic(view) is view
    finally:
        for alias in connections:
            connections.settings[alias]["ATOMIC_REQUESTS"] = False


def test_as_view_takes_class_attributes_only() -> None:
    site = object()
    assert McpView.as_view(site=site).view_initkwargs == {"site": site}
    for wrong in ({"sight": site}, {"serve_sync": None}, {"as_view": None}, {"_private": 1}):
        with pytest.raises(TypeError, match="only class attributes"):
            McpView.as_view(**wrong)


# --- the WSGI path: the test client -----------------------------------------------------------


def test_wsgi_path_serves_a_legacy_session_with_json_answers() -> None:
    client = Client(enforce_csrf_checks=True)  # as a real client: no CSRF cookie, no token
    session = {**ACCEPT, "mcp-session-id": initialize(client), "mcp-protocol-version": "2025-11-25"}
    called = client.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hi", "times": 2}}}), content_type="application/json", headers=session)
    assert called.status_code == 200
    assert called.headers["Content-Type"].startswith("application/json")
    assert called.json()["result"]["content"] == [{"type": "text", "text": "hi hi"}]
    progress = client.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "slow_steps", "arguments": {"steps": 2, "delay": 0}, "_meta": {"progressToken": "p"}}}),
        content_type="application/json", headers=session)
    assert progress.headers["Content-Type"].startswith("application/json")  # one answer, no SSE
    assert progress.json()["result"]["content"][0]["text"] == "done 2 steps"
    notified = client.post("/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                           content_type="application/json", headers=session)
    assert notified.status_code == 202 and notified.content == b""
    assert "Content-Type" not in notified.headers
    assert client.delete("/mcp", headers=session).status_code == 200
    gone = client.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}), content_type="application/json", headers=session)
    assert gone.status_code == 404


def test_wsgi_path_announces_what_it_can_deliver() -> None:
    client = Client()
    answer = client.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}), content_type="application/json", headers=ACCEPT)
    capabilities = answer.json()["result"]["capabilities"]
    assert "logging" not in capabilities
    assert capabilities["tools"] == {} and capabilities["prompts"] == {} and capabilities["resources"] == {}
    discovered = client.post("/mcp", modern("server/discover"), content_type="application/json", headers=modern_headers("server/discover"))
    assert discovered.status_code == 200
    assert "logging" not in discovered.json()["result"]["capabilities"]
    assert discovered.json()["result"]["capabilities"]["resources"] == {}


def test_wsgi_path_refuses_get_and_listen_and_serves_on() -> None:
    client = Client()
    session_id = initialize(client)
    get = client.get("/mcp", headers={"accept": "text/event-stream", "mcp-session-id": session_id})
    assert get.status_code == 405 and get.headers["Allow"] == "POST, DELETE"
    listen = client.post("/mcp", modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
                         content_type="application/json", headers=modern_headers("subscriptions/listen"))
    assert listen.status_code == 404 and listen.json()["error"]["code"] == -32601
    with override_settings(DJANGO_MCP={"CORS_ALLOWED_ORIGINS": ["https://app.example"]}):
        options = client.options("/mcp", headers={"origin": "https://app.example",
                                                  "access-control-request-method": "POST"})
    assert options.status_code == 204
    assert "GET" not in options.headers["Access-Control-Allow-Methods"]
    listed = client.post("/mcp", modern("tools/list"), content_type="application/json", headers=modern_headers("tools/list"))
    assert listed.status_code == 200 and listed.json()["result"]["tools"]


def test_wsgi_path_reads_no_more_than_the_body_limit() -> None:
    client = Client()
    with override_settings(DJANGO_MCP={"MAX_REQUEST_BODY_SIZE": 1000}):
        too_big = client.post("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "x" * 2000}),
                              content_type="application/json", headers=ACCEPT)
        assert too_big.status_code == 413 and too_big.json()["error"]
        # DATA_UPLOAD_MAX_MEMORY_SIZE (Django's limit of request.body) plays no part: the view reads the stream.
        with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10):
            fits = client.post("/mcp", modern("tools/list"), content_type="application/json", headers=modern_headers("tools/list"))
            assert fits.status_code == 200


def test_wsgi_path_takes_the_login_session_user(django_user_model: Any) -> None:
    """``SessionAuthentication`` (a default class) finds the user Django's login session names."""
    user = django_user_model.objects.create_user("sam", password="pw")
    client = Client()
    client.force_login(user)
    called = client.post("/mcp", modern("tools/call", {"name": "whoami", "arguments": {}}),
                         content_type="application/json", headers=modern_headers("tools/call", "whoami"))
    assert called.status_code == 200, called.content
    assert "sam" in json.dumps(called.json()["result"])
    anonymous = Client().post("/mcp", modern("tools/call", {"name": "whoami", "arguments": {}}),
                              content_type="application/json", headers=modern_headers("tools/call", "whoami"))
    assert "sam" not in json.dumps(anonymous.json()["result"])


def test_serving_the_view_expects_other_processes() -> None:
    assert fanout.alone(None) is True
    Client().post("/mcp", modern("tools/list"), content_type="application/json", headers=modern_headers("tools/list"))
    assert fanout.alone(None) is False


# --- the ASGI path: the async test client -----------------------------------------------------


async def test_asgi_path_streams_progress_as_sse() -> None:
    client = AsyncClient()
    answer = await client.post("/mcp", modern("tools/call", {"name": "slow_steps", "arguments": {
        "steps": 3, "delay": 0}, "_meta": {"progressToken": "p"}}), content_type="application/json", headers=modern_headers("tools/call", "slow_steps"))
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/event-stream")
    body = b"".join([chunk async for chunk in answer.streaming_content]).decode()
    events = [json.loads(line[len("data: "):]) for line in body.splitlines() if line.startswith("data: ")]
    assert [event["params"]["progress"] for event in events[:-1]] == [1, 2, 3]
    assert events[-1]["result"]["content"][0]["text"] == "done 3 steps"


async def test_asgi_path_announces_every_capability() -> None:
    answer = await AsyncClient().post("/mcp", modern("server/discover"), content_type="application/json", headers=modern_headers("server/discover"))
    capabilities = answer.json()["result"]["capabilities"]
    assert "logging" in capabilities and capabilities["tools"] == {"listChanged": True}


def test_wsgi_path_keeps_the_tool_admins_rate_limit_and_the_call_log(django_user_model: Any) -> None:
    """The tool admin and the call log see a call through the plain view as any other (both off in tests.settings)."""
    from django.conf import settings
    from django.core.cache import cache

    from django_mcp.tool_admin.policies import policies

    django_user_model.objects.create_user("alice")
    headers = {**modern_headers("tools/call", "echo"), "x-api-key": "alice-key"}
    client = Client()
    on = override_settings(DJANGO_MCP={**settings.DJANGO_MCP, "TOOL_ADMIN": True, "CALL_LOG": True})
    on.enable()
    cache.clear()
    try:
        serve_through_the_admins_policies(client, headers)
    finally:
        on.disable()
        policies.forget()


def serve_through_the_admins_policies(client: Client, headers: dict[str, str]) -> None:
    """Three calls of echo, limited to two a minute: two answered, one refused, all three logged."""
    from django_mcp.call_log.log import call_log
    from django_mcp.call_log.models import McpToolCall
    from django_mcp.tool_admin.models import McpTool
    from django_mcp.tool_admin.policies import policies

    call_command("mcp_sync_tools", stdout=StringIO())  # the tool admin's rows, as staff find them
    assert McpTool.objects.filter(name="echo").update(rate_limit="2/min") == 1
    policies.forget()
    outcomes = []
    for request_id in range(3):
        answer = client.post("/mcp", modern("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, request_id),
                             content_type="application/json", headers=headers)
        assert answer.status_code == 200
        outcomes.append(answer.json()["result"]["isError"])
    assert outcomes == [False, False, True]
    assert "Rate limit reached for tool echo" in answer.json()["result"]["content"][0]["text"]
    portal.run(call_log.flush())
    logged = list(McpToolCall.objects.filter(tool="echo", username="alice").order_by("created")
                  .values_list("outcome", "transport", "protocol_version"))
    assert logged == [("ok", "streamable-http", "2026-07-28")] * 2 + [("rate_limited", "streamable-http", "2026-07-28")]
