"""
``DEMO_OAUTH=1 scripts/demo``, as a newcomer runs it: it prints the demo users, serves the example
with authentication required, and the official SDK's OAuth client signs in as the reader.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live import ROOT, free_port
from tests.oauth import flow
from tests.oauth.test_sdk_client import MemoryStorage, ScriptedUser, provider


pytestmark = pytest.mark.live


class Demo:
    def __init__(self, port: int, output: Path) -> None:
        self.port, self.output = port, output
        self.url = f"http://127.0.0.1:{port}"
        self.mcp_url = f"{self.url}/mcp"


@pytest.fixture(scope="module")
def oauth_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    yield from run_demo(tmp_path_factory, "demo-oauth", {"DEMO_OAUTH": "1", "DEMO_READER_PASSWORD": "reader-pass-1"})


@pytest.fixture(scope="module")
def gunicorn_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    yield from run_demo(tmp_path_factory, "demo-gunicorn", {"DEMO_SERVER": "gunicorn"})


def run_demo(tmp_path_factory: pytest.TempPathFactory, name: str, settings: dict[str, str]) -> Iterator[Demo]:
    """``scripts/demo`` with ``settings`` in its environment, on a free port and a database of its own."""
    folder = tmp_path_factory.mktemp(name)
    demo = Demo(free_port(), folder / "demo.log")
    env = {**os.environ, **settings, "PORT": str(demo.port), "DEMO_SQLITE": str(folder / "demo.sqlite3")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    with demo.output.open("wb") as log:
        process = subprocess.Popen([str(ROOT / "scripts" / "demo")], cwd=ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240  # the first run may create the venv and migrate
        while time.monotonic() < deadline:
            assert process.poll() is None, demo.output.read_text()
            try:
                httpx2.get(demo.url + "/.well-known/oauth-authorization-server", timeout=2)
                break
            except httpx2.TransportError:
                time.sleep(0.5)
        else:
            pytest.fail("scripts/demo did not start:\n" + demo.output.read_text())
        yield demo
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def test_demo_prints_its_users_and_requires_sign_in(oauth_demo: Demo) -> None:
    banner = oauth_demo.output.read_text()
    assert "staff superuser:  admin / admin-demo-password" in banner
    assert "reader / reader-pass-1" in banner and "OAuth is ON" in banner
    refused = flow.mcp_post(oauth_demo.mcp_url, None, flow.INITIALIZE)
    assert refused.status_code == 401
    assert flow.challenge_params(refused.headers["www-authenticate"])["resource_metadata"].endswith(
        "/.well-known/oauth-protected-resource/mcp")
    for path in ("/sse", "/messages/?session_id=x"):
        method = httpx2.get if path == "/sse" else httpx2.post
        assert method(oauth_demo.url + path).status_code == 401, path


def test_the_demo_serves_the_admins_static_files(oauth_demo: Demo) -> None:
    """daphne serves none itself: django_mcp.asgi does, with the demo's DEBUG on (README, "Static files")."""
    css = httpx2.get(oauth_demo.url + "/static/admin/css/base.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert "served by the server itself" in oauth_demo.output.read_text()


def test_the_demo_names_its_health_checks_and_feature_apps(oauth_demo: Demo) -> None:
    banner = oauth_demo.output.read_text()
    assert f"{oauth_demo.url}/readyz" in banner and "tool_admin, call_log, query_tools" in banner
    assert "metrics, tasks, ui" in banner and "tracing" in banner and ".tmp/demo-traces.jsonl" in banner
    # and the views it shows:
    assert "ui://default/search_books" in banner and "ui://default/my_loans" in banner
    ready = httpx2.get(oauth_demo.url + "/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_the_demo_serves_metrics_and_logs_each_request(oauth_demo: Demo) -> None:
    banner = oauth_demo.output.read_text()
    assert f"{oauth_demo.url}/metrics" in banner and "oauth, metrics" in banner
    # An unauthenticated call is refused (the demo asks for OAuth): counted and logged nowhere secret.
    refused = httpx2.post(oauth_demo.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"accept": "application/json, text/event-stream"})
    assert refused.status_code == 401
    metrics = httpx2.get(oauth_demo.url + "/metrics")
    assert metrics.status_code == 200
    assert 'mcp_authentication_failures_total{reason="not_authenticated",transport="streamable-http"}' in metrics.text


def test_the_sdk_signs_in_to_the_demo_as_the_reader(oauth_demo: Demo) -> None:
    user = ScriptedUser(oauth_demo.url, "reader", "reader-pass-1")

    async def connect() -> set[str]:
        async with asyncio.timeout(60), httpx2.AsyncClient(auth=provider(oauth_demo, MemoryStorage(), user)) as http:
            async with Client(streamable_http_client(oauth_demo.mcp_url, http_client=http), mode="auto") as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                found = await client.call_tool("search_books", {"query": "Kindred"})
                assert not found.is_error
                return names

    try:
        names = asyncio.run(connect())
    finally:
        user.browser.close()
    assert "search_books" in names and "return_book" not in names  # the reader is no librarian
    assert "my_loans" in names  # a signed-in reader's own view
    assert "reader" in user.browser.consent_page
    # The demo's request log names the call, its caller and its outcome, never the token.
    lines = [line for line in oauth_demo.output.read_text().splitlines() if "mcp_request method=tools/call" in line]
    assert any("target=search_books outcome=ok" in line and "user=reader" in line for line in lines), lines


def test_the_gunicorn_demo_serves_the_catalogue_through_the_plain_view(gunicorn_demo: Demo) -> None:
    """
    ``DEMO_SERVER=gunicorn scripts/demo``: the example project under WSGI, MCP through
    ``django_mcp.views.McpView``. Clients of both eras list and call the tools, the librarian's key
    finds the librarian's; the banner says what the mode leaves out, GET is 405, the admin is styled.
    """
    banner = gunicorn_demo.output.read_text()
    assert "Served by gunicorn (WSGI, 2 workers) through the plain view" in banner
    assert "/healthz" not in banner.split("Served by gunicorn")[0]

    async def connect(mode: str, headers: dict[str, str]) -> set[str]:
        async with asyncio.timeout(60), httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(gunicorn_demo.mcp_url, http_client=http), mode=mode) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                found = await client.call_tool("search_books", {"query": "Kindred"})
                assert not found.is_error, found
                return names

    for mode in ("legacy", "auto"):
        anonymous = asyncio.run(connect(mode, {}))
        assert "search_books" in anonymous and "return_book" not in anonymous, mode
        librarian = asyncio.run(connect(mode, {"X-Api-Key": "librarian-demo-key"}))
        assert "return_book" in librarian, mode
    get = httpx2.get(gunicorn_demo.mcp_url, headers={"accept": "text/event-stream"}, timeout=10)
    assert get.status_code == 405
    css = httpx2.get(gunicorn_demo.url + "/static/admin/css/base.css", timeout=10)
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


def test_the_gunicorn_demo_runs_tasks_in_the_task_worker_and_serves_views(gunicorn_demo: Demo) -> None:
    """
    Under WSGI a durable task answers at once and runs in the demo's task worker (django-tasks-db's
    db_worker); ``tasks/get`` follows it on whichever gunicorn worker takes each poll. A view's page
    (MCP Apps, ``ui://``) is read as on the Channels endpoint.
    """
    def post(method: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {
                    "io.modelcontextprotocol/tasks": {}, "io.modelcontextprotocol/ui": {}}}}
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
                   "mcp-method": method, "mcp-name": name}
        response = httpx2.post(gunicorn_demo.mcp_url, headers=headers, timeout=20, json={
            "jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}})
        assert response.status_code == 200, response.text
        return response.json()["result"]

    created = post("tools/call", "audit_books", {"name": "audit_books", "arguments": {"pause": 0.01}})
    assert created["resultType"] == "task" and created["status"] == "working"
    deadline = time.monotonic() + 60
    while (task := post("tasks/get", created["taskId"], {"taskId": created["taskId"]}))["status"] == "working":
        assert time.monotonic() < deadline, task
        time.sleep(0.2)
    assert task["status"] == "completed", task
    assert task["result"]["content"][0]["text"].startswith("Audited 247 books")

    page = post("resources/read", "ui://default/search_books", {"uri": "ui://default/search_books"})
    assert page["contents"][0]["mimeType"].startswith("text/html")
    assert "<html" in page["contents"][0]["text"].lower()
