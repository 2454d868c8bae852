"""
The deployment of docs/howto/deployment.md, tested as it runs: two daphne workers behind nginx
(``deploy/nginx.conf``, round robin, no sticky sessions) on PostgreSQL and Redis, started by
``scripts/fleet``'s own module (conftest.py). Every request goes through nginx; nginx's access log,
whose ``upstream=`` field names the worker of each request, shows where each one went. Each test
tags its requests with a User-Agent of its own to find them there.

Real clients: the official ``mcp`` SDK where a client's behaviour matters (progress while a tool
runs), ``httpx2`` for raw HTTP and SSE where the wire does (which request goes where).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from deploy.fleet.nginx import upstream_addresses
from tests.deployment.conftest import Fleet


pytestmark = [pytest.mark.live, pytest.mark.services]

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
TIMEOUT = httpx2.Timeout(20.0)


# --- helpers -------------------------------------------------------------------------------------


def agent(kind: str) -> str:
    """A User-Agent no other request carries, so the access log tells this test's lines apart."""
    return f"fleet-test/{kind}/{uuid.uuid4().hex[:8]}"


def logged(fleet: Fleet, user_agent: str, count: int, timeout: float = 10.0) -> list[str]:
    """The access log lines of ``user_agent``, waiting until there are ``count`` (a stream's comes when it ends)."""
    deadline = time.monotonic() + timeout
    while True:
        lines = [line for line in fleet.access_log.read_text().splitlines() if f'"{user_agent}"' in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def worker_of(line: str) -> str:
    """The one worker that served a logged request (nginx retried nothing)."""
    addresses = upstream_addresses(line)
    assert len(addresses) == 1, line
    return addresses[0]


def sse_messages(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of a text/event-stream, one per event (https://html.spec.whatwg.org/multipage/server-sent-events.html)."""
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []


class LegacySession:
    """A 2025-11-25 session over raw HTTP (MCP spec 2025-11-25, basic/transports#streamable-http)."""

    def __init__(self, fleet: Fleet, user_agent: str) -> None:
        self.url = fleet.mcp_url
        self.http = httpx2.Client(timeout=TIMEOUT, headers={"User-Agent": user_agent})
        self.ids = iter(range(1, 10**6))
        self.headers: dict[str, str] = {}
        result = self.call("initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                          "clientInfo": {"name": "fleet-test", "version": "1.0"}})
        assert result["protocolVersion"] == LEGACY
        self.notify("notifications/initialized")

    def post(self, message: dict[str, Any], **headers: str) -> httpx2.Response:
        response = self.http.post(self.url, json=message,
                                  headers={"Accept": ACCEPT, **self.headers, **headers})
        if "mcp-session-id" in response.headers:
            self.headers = {"Mcp-Session-Id": response.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
        return response

    def call(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
        """A request's result, whether the answer came as JSON or as an event stream."""
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params or {}}
        response = self.post(message, **headers)
        assert response.status_code == 200, (method, response.status_code, response.text)
        if response.headers["content-type"].startswith("text/event-stream"):
            answer = next(m for m in sse_messages(iter(response.text.splitlines() + [""])) if m.get("id") == message["id"])
        else:
            answer = response.json()
        assert "result" in answer, answer
        return answer["result"]

    def notify(self, method: str) -> None:
        response = self.post({"jsonrpc": "2.0", "method": method})
        assert response.status_code == 202, (response.status_code, response.text)

    def close(self) -> None:
        self.http.delete(self.url, headers=self.headers)
        self.http.close()


# --- (1) one legacy session, every other request on the other worker ------------------------------


def test_a_legacy_session_alternates_between_the_workers(fleet: Fleet) -> None:
    """
    Round robin without sticky sessions sends consecutive requests of one session to alternating
    workers; each is served, because the session lives in PostgreSQL (and in its signed id) and not
    in the worker that opened it.
    """
    user_agent = agent("session")
    session = LegacySession(fleet, user_agent)
    try:
        tools = {tool["name"] for tool in session.call("tools/list")["tools"]}
        assert {"search_books", "lend_book", "check_shelves"} <= tools
        found = session.call("tools/call", {"name": "search_books", "arguments": {"query": "le guin"}})
        titles = [book["title"] for book in found["structuredContent"]["result"]]
        assert "A Wizard of Earthsea" in titles
        book = json.loads(session.call("resources/read", {"uri": "library://book/1"})["contents"][0]["text"])
        assert book["title"]
        prompt = session.call("prompts/get", {"name": "recommend", "arguments": {"author": "Italo Calvino"}})
        assert "Italo Calvino" in prompt["messages"][0]["content"]["text"]
        assert session.call("ping") == {}
    finally:
        session.close()

    lines = logged(fleet, user_agent, 8)
    served_by = [worker_of(line) for line in lines]
    assert len(served_by) == 8, lines  # initialize, initialized, 5 requests, DELETE
    assert set(served_by) == set(fleet.workers), served_by
    assert all(a != b for a, b in zip(served_by, served_by[1:])), f"not alternating: {served_by}"


# --- (2) streams are not buffered ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_reaches_the_client_while_the_tool_runs(fleet: Fleet, mode: str) -> None:
    """
    check_shelves reports progress shelf by shelf, pausing 0.2 s on each of the demo's 12 shelves.
    Its first progress notification must reach the SDK client well before the result: with any
    buffering between the worker and the client (nginx's proxy_buffering) every event would
    arrive together with the result. Both eras: a legacy session (``legacy``) and a stateless
    2026-07-28 request (``auto``), each answered as an event stream.
    """
    started = time.monotonic()
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(time.monotonic() - started)

    async with asyncio.timeout(30), Client(fleet.mcp_url, mode=mode) as client:
        started = time.monotonic()
        result = await client.call_tool("check_shelves", {"pause": 0.2}, progress_callback=on_progress)
        finished = time.monotonic() - started
    assert not result.is_error and result.content[0].text.startswith("Checked 12 shelves"), result.content
    assert len(progress) == 12, progress
    # The tool runs about 2.4 s after its first report; 1 s of margin covers a slow machine.
    assert finished - progress[0] > 1.0, f"first progress at {progress[0]:.2f} s, result at {finished:.2f} s"
    assert progress == sorted(progress) and progress[-1] - progress[0] > 1.0, progress


# --- (3) a GET stream hears what another worker did ----------------------------------------------


def test_a_get_stream_receives_a_notification_caused_on_the_other_worker(fleet: Fleet) -> None:
    """
    A legacy session subscribes to a book and holds its GET stream (MCP spec 2025-11-25,
    basic/transports#listening-for-messages-from-the-server) on one worker; the next request, which
    round robin sends to the other worker, lends the book. Saving it there notifies over Redis, and
    the stream's worker delivers notifications/resources/updated (server/resources#subscriptions).
    """
    setup = agent("stream-setup")
    session = LegacySession(fleet, setup)
    try:
        found = session.call("tools/call", {"name": "search_books", "arguments": {"query": "the salt road"}})
        book = next(book for book in found["structuredContent"]["result"] if book["available"])
        uri = f"library://book/{book['id']}"
        assert session.call("resources/subscribe", {"uri": uri}) == {}

        listener, trigger = agent("stream-get"), agent("stream-trigger")
        headers = {**session.headers, "Accept": "text/event-stream", "User-Agent": listener}
        with session.http.stream("GET", fleet.mcp_url, headers=headers) as stream:
            assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
            lent = session.call("tools/call", {"name": "lend_book", "arguments": {"book_id": book["id"]}},
                                **{"User-Agent": trigger})
            assert lent["content"][0]["text"] == f"Lent out: {book['title']}.", lent
            received = next(message for message in sse_messages(stream.iter_lines())
                            if message.get("method") == "notifications/resources/updated")
            assert received["params"]["uri"] == uri
    finally:
        session.close()

    (get_line,) = logged(fleet, listener, 1)
    (trigger_line,) = logged(fleet, trigger, 1)
    assert '"GET /mcp' in get_line and '"POST /mcp' in trigger_line
    assert worker_of(get_line) != worker_of(trigger_line), (get_line, trigger_line)


# --- (4) the OAuth metadata names the public address ---------------------------------------------


def test_oauth_metadata_names_the_public_url(fleet: Fleet) -> None:
    """
    RFC 9728 protected-resource metadata and RFC 8414 authorization-server metadata name the
    address clients use, PUBLIC_BASE_URL (nginx's), never a worker's; even when a request names
    another host, as a client of another proxy layer might (MCP spec 2025-11-25, basic/authorization).
    """
    public = fleet.public_url
    with httpx2.Client(timeout=TIMEOUT, headers={"User-Agent": agent("oauth")}) as http:
        for host in (None, f"localhost:{fleet.port}"):
            headers = {"Host": host} if host else {}
            resource = http.get(f"{public}/.well-known/oauth-protected-resource/mcp", headers=headers)
            assert resource.status_code == 200, resource.text
            assert resource.json()["resource"] == f"{public}/mcp"
            assert resource.json()["authorization_servers"] == [public]
            server = http.get(f"{public}/.well-known/oauth-authorization-server", headers=headers)
            assert server.status_code == 200, server.text
            metadata = server.json()
            assert metadata["issuer"] == public
            for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
                assert metadata[name].startswith(f"{public}/"), (name, metadata[name])
            for worker in fleet.workers:
                assert worker.split(":")[1] not in resource.text + server.text


# --- (5) the admin through the proxy ------------------------------------------------------------


def test_the_admin_works_through_the_proxy(fleet: Fleet) -> None:
    """
    The login page with its CSS, served by nginx from collectstatic's folder (no worker named in
    the log); a login POST that passes Django's CSRF checks behind the proxy (the browser's Origin
    is the public address: CSRF_TRUSTED_ORIGINS, Host passed through); the admin index.
    """
    user_agent = agent("admin")
    public = fleet.public_url
    with httpx2.Client(base_url=public, timeout=TIMEOUT, headers={"User-Agent": user_agent}) as http:
        login = http.get("/admin/login/", params={"next": "/admin/"})
        assert login.status_code == 200, login.text
        stylesheets = re.findall(r'href="(/static/[^"]+\.css)"', login.text)
        assert "/static/admin/css/base.css" in stylesheets, stylesheets
        css = http.get("/static/admin/css/base.css")
        assert css.status_code == 200 and css.headers["content-type"] == "text/css", css.headers
        assert css.headers["server"].startswith("nginx")

        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)
        form = {"username": "admin", "password": "admin-demo-password", "next": "/admin/"}
        browser = {"Origin": public, "Referer": f"{public}/admin/login/"}
        refused = http.post("/admin/login/", data=form, headers=browser)  # no token: CSRF is on
        assert refused.status_code == 403, refused.status_code
        signed_in = http.post("/admin/login/", data={**form, "csrfmiddlewaretoken": token}, headers=browser)
        assert signed_in.status_code == 302 and signed_in.headers["location"] == "/admin/", signed_in.text[:2000]
        index = http.get("/admin/")
        assert index.status_code == 200 and "Site administration" in index.text, index.text[:2000]

    lines = logged(fleet, user_agent, 5)
    static = [line for line in lines if '"GET /static/admin/css/base.css' in line]
    assert static and upstream_addresses(static[0]) == [], static  # nginx answered it, no worker
    pages = [line for line in lines if "/admin/" in line and "/static/" not in line]
    assert {worker_of(line) for line in pages} == set(fleet.workers), pages  # the admin session crossed workers too


# --- (6) health checks through nginx ------------------------------------------------------------


def test_health_checks_through_nginx(fleet: Fleet) -> None:
    """
    /healthz (liveness) and /readyz (PostgreSQL and Redis reachable) answer through the proxy;
    /metrics, which is for scrapers that address each worker, does not.
    """
    user_agent = agent("health")
    with httpx2.Client(base_url=fleet.public_url, timeout=TIMEOUT, headers={"User-Agent": user_agent}) as http:
        alive = http.get("/healthz")
        assert alive.status_code == 200 and alive.json() == {"status": "ok"}
        ready = http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json() == {"status": "ready", "checks": {"database": "ok", "channel_layer": "ok"}}
        assert http.get("/metrics").status_code == 404
    alive_line, ready_line, metrics_line = logged(fleet, user_agent, 3)
    assert {worker_of(alive_line), worker_of(ready_line)} == set(fleet.workers)
    assert upstream_addresses(metrics_line) == []  # refused by nginx itself


def test_the_workers_listen_with_the_guides_backlog(fleet: Fleet) -> None:
    """
    docs/howto/deployment.md ("Reconnections after a restart"): each worker's listening socket has
    room for 4096 waiting connections, not Twisted's 50, as the kernel itself reports it (``ss``:
    a listening socket's Send-Q is its backlog, capped at net.core.somaxconn).
    """
    if shutil.which("ss") is None:
        pytest.skip(reason="needs ss (iproute2) to read a listening socket's backlog; this machine has none")
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    for worker in fleet.workers:
        port = worker.rsplit(":", 1)[1]
        listing = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
        backlogs = {int(line.split()[2]) for line in listing.splitlines() if line.startswith("LISTEN")}
        assert backlogs == {min(4096, somaxconn)}, (worker, listing)
