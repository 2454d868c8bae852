"""
Authentication: who is asking, decided once per request on every transport by the classes of
``django_mcp.authentication``, driven with the API-key example ``tests/testapp/authentication.py``
(``X-Api-Key: <username>-key``, listed in ``tests.settings``): the seam in process; ``/mcp`` on a live
daphne server with the official SDK client (``auto`` → 2026-07-28, ``legacy`` → 2025-11-25) and raw
HTTP; legacy sessions (Streamable HTTP, 2024-11-05 ``/sse`` + ``/messages/``) bound to their user;
stdio in process; a per-endpoint override through Channels' ``HttpCommunicator``. The live users
(alice; bob, staff; carol, inactive) go into the live server's SQLite file through a ``python -c``
child, as in ``tests/transports/test_stdio.py``.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from channels.testing import HttpCommunicator
from django.contrib.auth.models import AnonymousUser, User
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from django_mcp import Context
from django_mcp.authentication import (AuthenticationFailed, BaseAuthentication, IncomingRequest,
                                       ProcessUserAuthentication, SessionAuthentication, authenticate, challenge)
from django_mcp.sites import McpSite
from django_mcp.transports.http import McpHttpConsumer
from django_mcp.transports.lines import LineReader
from django_mcp.transports.stdio import StdioServer
from tests.live import ROOT, LiveServer, server_env
from tests.testapp.authentication import ApiKeyAuthentication
from tests.transports.sse_client import SSE, SseSession, call, request, send
from tests.transports.workers import tool_text


TIMEOUT, MODERN, LEGACY = 20, "2026-07-28", "2025-11-25"
ALICE, BOB, WRONG = {"X-Api-Key": "alice-key"}, {"X-Api-Key": "bob-key"}, {"X-Api-Key": "mallory-key"}
CHALLENGE = 'ApiKey realm="mcp", header="X-Api-Key"'
REFUSED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Unknown API key"}}
WHOAMI = {"name": "whoami", "arguments": {}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "auth-tests", "version": "1"}}}


def build_site() -> McpSite:
    """The in-process site: ``whoami`` as ``tests/testapp/mcp.py`` has it."""
    site = McpSite("authentication-tests")

    @site.tool()
    async def whoami(ctx: Context) -> str:
        """Who the call runs as, and the scopes of its credential."""
        return " ".join([ctx.user.username or "anonymous", *sorted(ctx.scopes or ())])

    return site


class Fixed(BaseAuthentication):
    """Answers what it is told (a pair, None, or a refusal) and counts its calls."""

    def __init__(self, result: Any = None, *, refuse: str | None = None, header: str | None = None) -> None:
        self.result, self.refuse, self.header, self.calls = result, refuse, header, 0

    async def authenticate(self, request: IncomingRequest) -> Any:
        self.calls += 1
        if self.refuse:
            raise AuthenticationFailed(self.refuse)
        return self.result

    def authenticate_header(self, request: IncomingRequest) -> str | None:
        return self.header


class HeaderUser(BaseAuthentication):
    """``X-Test-User: dora`` → an (unsaved) user dora with the scope ``custom``."""

    async def authenticate(self, request: IncomingRequest) -> Any:
        name = request.headers.get("x-test-user")
        return None if name is None else (User(username=name), SimpleNamespace(scopes={"custom"}))


HTTP = IncomingRequest(transport="streamable-http")


# --- 1. the seam, in process ---------------------------------------------------------------------


async def test_first_class_that_recognises_wins() -> None:
    silent, bob, carol = Fixed(None), Fixed(("bob", "token-b")), Fixed(("carol", "token-c"))
    assert await authenticate([silent, bob, carol], HTTP) == ("bob", "token-b")
    assert (silent.calls, bob.calls, carol.calls) == (1, 1, 0)


async def test_nobody_recognising_is_anonymous() -> None:
    for authenticators in ([], [Fixed(None), Fixed(None)], [SessionAuthentication(), ProcessUserAuthentication()]):
        user, auth = await authenticate(authenticators, HTTP)
        assert isinstance(user, AnonymousUser) and not user.is_authenticated and auth is None


async def test_a_refusal_stops_the_chain_and_names_its_class() -> None:
    silent, refusing, later = Fixed(None), Fixed(refuse="Expired token"), Fixed(("later", None))
    with pytest.raises(AuthenticationFailed) as caught:
        await authenticate([silent, refusing, later], HTTP)
    assert caught.value.authenticator is refusing and later.calls == 0
    assert caught.value.to_error() == {"code": -32600, "message": "Expired token"}


async def test_challenge_names_the_refusing_class_else_the_first_with_a_scheme() -> None:
    bearer = Fixed(refuse="no", header='Bearer realm="mcp"')
    # No failure: the first class that names a scheme (the session class names none).
    assert challenge([SessionAuthentication(), ApiKeyAuthentication(), bearer], HTTP) == CHALLENGE
    assert challenge([bearer, ApiKeyAuthentication()], HTTP) == 'Bearer realm="mcp"'
    # A failure: the scheme of the class that refused, not of the first in the list.
    with pytest.raises(AuthenticationFailed) as caught:
        await authenticate([ApiKeyAuthentication(), bearer], HTTP)
    assert challenge([ApiKeyAuthentication(), bearer], HTTP, caught.value) == 'Bearer realm="mcp"'
    # A refusing class without a scheme falls back to the first that has one; none at all → None.
    assert challenge([ApiKeyAuthentication()], HTTP, AuthenticationFailed()) == CHALLENGE
    assert challenge([SessionAuthentication(), ProcessUserAuthentication()], HTTP) is None


async def test_session_authentication_takes_only_an_authenticated_scope_user() -> None:
    alice = User(username="alice")
    found = await SessionAuthentication().authenticate(IncomingRequest("streamable-http", scope={"user": alice}))
    assert found == (alice, None)
    for scope in ({"user": AnonymousUser()}, {}):
        assert await SessionAuthentication().authenticate(IncomingRequest("streamable-http", scope=scope)) is None
    # Nor does it look at the stdio process user.
    assert await SessionAuthentication().authenticate(IncomingRequest("stdio", process_user=alice)) is None


def test_headers_read_from_the_consumer_are_a_str_keyed_view() -> None:
    raw = {b"x-api-key": "alice-key", b"authorization": "Bearer t", b"x-caf\xc3\xa9": "latin"}
    headers = IncomingRequest("streamable-http", raw_headers=raw).headers
    assert headers.get("x-api-key") == "alice-key" and headers["authorization"] == "Bearer t"
    assert headers.get("X-Api-Key") is None and headers.get("missing", "d") == "d"
    assert headers.get("x-\u2603") is None  # a name no header can have
    assert "authorization" in headers and "cookie" not in headers and 1 not in headers
    with pytest.raises(KeyError):
        headers["cookie"]
    assert dict(headers) == {"x-api-key": "alice-key", "authorization": "Bearer t", "x-caf\xc3\xa9": "latin"}
    assert len(headers) == 3


async def test_process_user_authentication() -> None:
    alice = User(username="alice")
    assert await ProcessUserAuthentication().authenticate(IncomingRequest("stdio", process_user=alice)) == (alice, None)
    for user in (None, AnonymousUser()):
        assert await ProcessUserAuthentication().authenticate(IncomingRequest("stdio", process_user=user)) is None
    assert await ProcessUserAuthentication().authenticate(IncomingRequest("http", scope={"user": alice})) is None


@pytest.mark.django_db(transaction=True)
async def test_api_key_authentication_example() -> None:
    alice = await User.objects.acreate_user("alice")
    await User.objects.acreate_user("bob", is_staff=True)
    await User.objects.acreate_user("carol", is_active=False)

    def keyed(key: str) -> IncomingRequest:
        return IncomingRequest("streamable-http", headers={"x-api-key": key})

    user, auth = await ApiKeyAuthentication().authenticate(keyed("alice-key"))
    assert user == alice and auth.key == "alice-key" and auth.scopes == {"mcp:read"}
    _, auth = await ApiKeyAuthentication().authenticate(keyed("bob-key"))
    assert auth.scopes == {"mcp:read", "mcp:write"}
    assert await ApiKeyAuthentication().authenticate(HTTP) is None
    for key in ("mallory-key", "carol-key", "alice", "-key", ""):
        with pytest.raises(AuthenticationFailed, match="Unknown API key"):
            await ApiKeyAuthentication().authenticate(keyed(key))


# --- live servers ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(live_server_mcp: LiveServer, sqlite_server_env: Mapping[str, str]) -> LiveServer:
    """``live_server_mcp`` with alice, bob (staff) and carol (inactive) in its database."""
    script = ("import django; django.setup(); from django.contrib.auth.models import User\n"
              "for name, staff, active in (('alice', False, True), ('bob', True, True), ('carol', False, False)):\n"
              "    User.objects.update_or_create(username=name, defaults={'is_staff': staff, 'is_active': active})")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=server_env(sqlite_server_env),
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return live_server_mcp


@asynccontextmanager
async def sdk(url: str, mode: str, headers: Mapping[str, str], seen: list[Any] | None = None) -> AsyncIterator[Client]:
    """The SDK client over an httpx2 client that sends ``headers`` and records every response in ``seen``."""
    responses = seen if seen is not None else []

    async def record(response: httpx2.Response) -> None:
        responses.append(response)

    http = httpx2.AsyncClient(headers=dict(headers), event_hooks={"response": [record]})
    async with asyncio.timeout(TIMEOUT), http, Client(streamable_http_client(url, http_client=http),
                                                      mode=mode) as client:
        yield client


def leaves(group: BaseException) -> list[Any]:
    if isinstance(group, BaseExceptionGroup):
        return [leaf for inner in group.exceptions for leaf in leaves(inner)]
    return [group]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_runs_as_the_key_s_user(server: LiveServer, mode: str) -> None:
    for headers, expected in ((ALICE, "alice mcp:read"), (BOB, "bob mcp:read mcp:write"), ({}, "anonymous")):
        async with sdk(server.mcp_url, mode, headers) as client:
            assert client.protocol_version == (MODERN if mode == "auto" else LEGACY)
            result = await client.call_tool("whoami", {})
            assert result.is_error is False and [block.text for block in result.content] == [expected]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_with_a_wrong_key_cannot_connect(server: LiveServer, mode: str) -> None:
    seen: list[httpx2.Response] = []
    errors: list[MCPError] = []
    try:
        async with sdk(server.mcp_url, mode, WRONG, seen):
            pytest.fail("connected with a wrong key")
    except* MCPError as group:  # the SDK raises it inside (nested) task-group exception groups
        errors.extend(leaves(group))
    assert [(error.code, str(error)) for error in errors] == [(-32600, "Unknown API key")]
    assert seen and {response.status_code for response in seen} == {401}
    assert {response.headers.get("www-authenticate") for response in seen} == {CHALLENGE}


async def test_raw_http_with_a_wrong_key_is_401_never_500(server: LiveServer) -> None:
    assert server.log_path is not None
    start = server.log_path.stat().st_size
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    async with asyncio.timeout(TIMEOUT), httpx2.AsyncClient() as http:
        replies = [await http.post(server.mcp_url, json=ping, headers={**accept, "X-Api-Key": key})
                   for key in ("mallory-key", "carol-key", "alice")]
        replies.append(await http.get(server.mcp_url, headers={"Accept": SSE, **WRONG}))
        replies.append(await http.delete(server.mcp_url, headers={"Mcp-Session-Id": "0" * 32, **WRONG}))
    for reply in replies:
        assert reply.status_code == 401, (reply.request.method, reply.status_code, reply.text)
        assert reply.headers["www-authenticate"] == CHALLENGE
        assert reply.headers["content-type"].startswith("application/json")
        assert reply.json() == REFUSED
    await asyncio.sleep(0.2)
    with server.log_path.open("rb") as log:
        log.seek(start)
        assert b"Traceback" not in log.read()


def test_legacy_session_is_bound_to_its_user(server: LiveServer) -> None:
    reply = request(server, "POST", INITIALIZE, ALICE)
    assert reply.status == 200, (reply.status, reply.body)
    session = {"Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    assert request(server, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                   {**session, **ALICE}).status == 202
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": WHOAMI}
    assert tool_text(call(server, message, {**session, **ALICE})) == "alice mcp:read"
    for others in (BOB, {}):
        for method, body, extra in (("POST", message, {}), ("GET", None, {"Accept": SSE}), ("DELETE", None, {})):
            reply = request(server, method, body, {**session, **others, **extra})
            assert reply.status == 404, (method, others, reply.status, reply.body)
            assert reply.body["error"]["message"] == "Session not found"
    # Bob's DELETE did not end it: alice is still served.
    assert tool_text(call(server, {**message, "id": 3}, {**session, **ALICE})) == "alice mcp:read"
    assert request(server, "DELETE", None, {**session, **ALICE}).status == 200


def sse_call(server: LiveServer, session: SseSession, method: str, params: dict[str, Any],
             headers: Mapping[str, str]) -> dict[str, Any]:
    """POST a request to the session's endpoint with ``headers`` (202); its answer from the stream."""
    message = session.message(method, params)
    reply = session.post(server, message, headers)
    assert reply.status == 202, (reply.status, reply.raw)
    response, _ = session.stream.wait_for(lambda m: m.get("id") == message["id"] and "method" not in m)
    return response


def test_sse_session_is_bound_to_its_user(server: LiveServer) -> None:
    session = SseSession.open(server, headers=ALICE)
    try:
        initialized = sse_call(server, session, "initialize", {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "auth-sse", "version": "1"}},
            ALICE)
        assert initialized["result"]["protocolVersion"] == "2024-11-05"
        assert session.post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, ALICE).status == 202
        assert tool_text(sse_call(server, session, "tools/call", WHOAMI, ALICE)) == "alice mcp:read"
        for others in ({}, BOB):
            reply = session.post(server, session.message("tools/call", WHOAMI), others)
            assert reply.status == 404, (others, reply.status, reply.raw)
            assert reply.body["error"]["message"] == "Session not found"
        reply = session.post(server, session.message("tools/call", WHOAMI), WRONG)
        assert reply.status == 401 and reply.headers["www-authenticate"] == CHALLENGE and reply.body == REFUSED
        # None of that reached the stream: the next answer on it is alice's.
        assert tool_text(sse_call(server, session, "tools/call", WHOAMI, ALICE)) == "alice mcp:read"
    finally:
        session.close()
    anonymous = SseSession.open(server)
    try:
        assert session.session_id != anonymous.session_id
        assert anonymous.post(server, anonymous.message("ping"), ALICE).status == 404
    finally:
        anonymous.close()


def test_sse_stream_with_a_wrong_key_is_401(server: LiveServer) -> None:
    for key in ("mallory-key", "carol-key"):
        reply = send(server, "GET", "/sse", headers={"Accept": SSE, "X-Api-Key": key})
        assert reply.stream is None and reply.status == 401, (reply.status, reply.headers)
        assert reply.headers["www-authenticate"] == CHALLENGE and reply.body == REFUSED


# --- 5. stdio, in process ------------------------------------------------------------------------


def modern(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "auth-tests", "version": "1"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}


async def run_stdio(*rounds: list[dict[str, Any]], **options: Any) -> dict[Any, dict[str, Any]]:
    """Feed the rounds of lines one after another, each once the last is answered; answers by id."""
    read_fd, write_fd = os.pipe()
    output, expected = io.BytesIO(), 0
    with os.fdopen(read_fd, "rb") as stream:
        serving = asyncio.ensure_future(StdioServer(LineReader(stream, limit=1 << 20), output, site=build_site(),
                                                    **options).serve())
        try:
            for lines in rounds:
                os.write(write_fd, b"".join(json.dumps(line).encode() + b"\n" for line in lines))
                expected += len(lines)
                async with asyncio.timeout(10):
                    while output.getvalue().count(b"\n") < expected:
                        await asyncio.sleep(0.01)
                assert not serving.done(), "the server stopped before its input ended"
        finally:
            os.close(write_fd)
            await asyncio.wait_for(serving, 10)
    answers = [json.loads(line) for line in output.getvalue().splitlines()]
    assert len(answers) == expected, answers
    return {answer["id"]: answer for answer in answers}


async def test_stdio_runs_as_the_process_user() -> None:
    lines = [INITIALIZE, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": WHOAMI},
             modern(3, "tools/call", WHOAMI)]
    alice = await run_stdio(lines, user=User(username="alice"), authentication_classes=[ProcessUserAuthentication])
    assert tool_text(alice[2]) == tool_text(alice[3]) == "alice"
    anonymous = await run_stdio(lines, user=AnonymousUser(), authentication_classes=[ProcessUserAuthentication])
    assert tool_text(anonymous[2]) == tool_text(anonymous[3]) == "anonymous"
    # The classes decide, not the process user: without one that reads it, alice is not herself.
    nobody = await run_stdio(lines, user=User(username="alice"), authentication_classes=[])
    assert tool_text(nobody[3]) == "anonymous"


async def test_stdio_refusal_is_an_error_per_request_and_serving_goes_on() -> None:
    refusing = Fixed(refuse="Credential revoked")
    rounds = ([INITIALIZE, modern(2, "tools/call", WHOAMI)], [modern(3, "tools/list")],
              [modern(4, "tools/call", WHOAMI)])
    answers = await run_stdio(*rounds, user=User(username="alice"),
                              authentication_classes=[ProcessUserAuthentication, refusing])
    assert refusing.calls == 0 and tool_text(answers[4]) == "alice"  # the process user is recognised first
    # Anonymous: the refusing class is reached on every request, and each gets its error line.
    answers = await run_stdio(*rounds, user=AnonymousUser(),
                              authentication_classes=[ProcessUserAuthentication, refusing])
    assert refusing.calls == 4 and sorted(answers) == [1, 2, 3, 4]
    for request_id, answer in answers.items():
        assert answer == {"jsonrpc": "2.0", "id": request_id,
                          "error": {"code": -32600, "message": "Credential revoked"}}, answer


# --- 6. per-endpoint classes ----------------------------------------------------------------------


async def post_whoami(app: Any, headers: Mapping[str, str]) -> dict[str, Any]:
    raw = [(b"host", b"testserver"), (b"content-type", b"application/json"),
           (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", MODERN.encode()),
           (b"mcp-method", b"tools/call"), (b"mcp-name", b"whoami"),
           *((name.lower().encode(), value.encode()) for name, value in headers.items())]
    communicator = HttpCommunicator(app, "POST", "/mcp", json.dumps(modern(1, "tools/call", WHOAMI)).encode(), raw)
    try:
        response = await communicator.get_response(timeout=5)
        await communicator.wait(timeout=5)
    finally:
        communicator.stop(exceptions=False)
    response["json"] = json.loads(response["body"])
    response["header_map"] = {name.decode(): value.decode() for name, value in response["headers"]}
    return response


@pytest.mark.django_db(transaction=True)
async def test_per_endpoint_classes_replace_the_setting() -> None:
    await User.objects.acreate_user("alice")
    site = build_site()
    own = McpHttpConsumer.as_asgi(site=site, authentication_classes=[HeaderUser])
    default = McpHttpConsumer.as_asgi(site=site)

    reply = await post_whoami(own, {"X-Test-User": "dora"})
    assert reply["status"] == 200 and tool_text(reply["json"]) == "dora custom"
    # The setting's API-key class is not consulted: its keys, good or bad, mean nothing here.
    for headers in (WRONG, ALICE):
        reply = await post_whoami(own, headers)
        assert reply["status"] == 200 and tool_text(reply["json"]) == "anonymous"

    # Without the override the setting applies, and the example class does.
    assert tool_text((await post_whoami(default, ALICE))["json"]) == "alice mcp:read"
    assert tool_text((await post_whoami(default, {"X-Test-User": "dora"}))["json"]) == "anonymous"
    reply = await post_whoami(default, WRONG)
    assert reply["status"] == 401 and reply["header_map"]["www-authenticate"] == CHALLENGE
    assert reply["json"] == REFUSED

    # A per-endpoint class that refuses names its own scheme in the 401.
    bearer = McpHttpConsumer.as_asgi(site=site, authentication_classes=[
        HeaderUser, Fixed(refuse="Bad token", header='Bearer realm="own"')])
    reply = await post_whoami(bearer, {})
    assert reply["status"] == 401 and reply["header_map"]["www-authenticate"] == 'Bearer realm="own"'
    assert reply["json"]["error"] == {"code": -32600, "message": "Bad token"}
