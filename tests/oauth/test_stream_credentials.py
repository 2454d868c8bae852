"""
A stream outlives no credential (issue 41, part 3; ``transports.credential_watch``), on a live
daphne server with authentication required, keep-alives every 0.5 s and credentials checked again
every second: a legacy GET stream whose personal access token is revoked ends, and the session's
next request with it gets 401, while another client's stream goes on; a 2026-07-28
``subscriptions/listen`` stream ends at its token's expiry (on a server that checks only hourly);
an HTTP+SSE stream ends when its user is deactivated. And without waiting for a check: an OAuth token revoked at this server's
revocation endpoint ends its streams at once (the revocation is announced to every stream of its
user, ``credential_watch.credentials_changed``).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator, Mapping

import pytest

from tests.live import ROOT, LiveServer, server_env
from tests.transports.sse_client import SSE, SSEStream, SseSession, request

from . import flow
from .conftest import PASSWORDS
from .flow import create_user


LEGACY, MODERN = "2025-11-25", "2026-07-28"


@pytest.fixture(scope="module")
def server(oauth_env: Mapping[str, str]) -> Iterator[LiveServer]:
    env = {**oauth_env, "MCP_TEST_KEEPALIVE": "0.5", "MCP_TEST_CREDENTIAL_CHECK": "1"}
    with LiveServer(env=env, name="stream-credentials") as started:
        yield started


def django(env: Mapping[str, str], code: str) -> str:
    done = subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code], cwd=ROOT,
                          env=server_env(env), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def personal_token(env: Mapping[str, str], username: str, seconds: int | None = None) -> str:
    lifetime = f"timedelta(seconds={seconds})" if seconds else "timedelta(days=1)"
    return django(env, "from datetime import timedelta; from django.contrib.auth import get_user_model; "
                       "from django_mcp.oauth.models import PersonalAccessToken; "
                       f"user = get_user_model().objects.get(username={username!r}); "
                       f"print(PersonalAccessToken.issue(user, 'stream test', 'mcp:tools mcp:resources mcp:prompts', "
                       f"{lifetime})[1])")


def open_legacy(server: LiveServer, token: str) -> tuple[dict[str, str], SSEStream]:
    auth = {"Authorization": f"Bearer {token}"}
    reply = request(server, "POST", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "stream-credentials", "version": "1"}}},
        auth)
    assert reply.status == 200, (reply.status, reply.body)
    headers = {**auth, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    assert request(server, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers).status == 202
    stream = request(server, "GET", headers={"Accept": SSE, **headers}).stream
    assert stream is not None
    return headers, stream


def open_listen(server: LiveServer, token: str) -> SSEStream:
    """A 2026-07-28 ``subscriptions/listen`` stream with ``token``, acknowledged."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "stream-credentials", "version": "1"}}
    message = {"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
               "params": {"notifications": {"toolsListChanged": True}, "_meta": meta}}
    reply = request(server, "POST", message, {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": MODERN,
                                              "Mcp-Method": "subscriptions/listen"})
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
    assert reply.stream.next_message()["method"] == "notifications/subscriptions/acknowledged"
    return reply.stream


def ends_within(stream: SSEStream, seconds: float) -> bool:
    _, ended = stream.collect(seconds)
    return ended


def test_a_revoked_token_ends_its_stream_and_its_session_refuses_it(server: LiveServer,
                                                                    oauth_env: Mapping[str, str]) -> None:
    revoked, kept = personal_token(oauth_env, "alice"), personal_token(oauth_env, "alice")
    headers, stream = open_legacy(server, revoked)
    _, other = open_legacy(server, kept)
    try:
        assert not ends_within(stream, 1.2)  # checked again, still good
        django(oauth_env, "from django.utils import timezone; from django_mcp.oauth.models import "
                          f"PersonalAccessToken, token_digest; PersonalAccessToken.objects.filter("
                          f"digest=token_digest({revoked!r})).update(revoked=timezone.now())")
        started = time.monotonic()
        assert ends_within(stream, 5.0), "the stream outlived its revoked token"
        assert time.monotonic() - started < 3.5  # a check every second, at a keep-alive every 0.5 s
        ping = request(server, "POST", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers)
        assert ping.status == 401
        assert not ends_within(other, 2.0)  # nothing else is dropped
    finally:
        stream.close()
        other.close()


def test_a_listen_stream_ends_at_its_tokens_expiry(unchecked_server: LiveServer, oauth_env: Mapping[str, str]) -> None:
    server = unchecked_server  # no check is due for an hour: only the expiry's timer can end the stream
    asked = time.monotonic()
    token = personal_token(oauth_env, "alice", seconds=3)  # made at some moment in this subprocess's run
    made_by = time.monotonic()
    stream = open_listen(server, token)
    try:
        assert ends_within(stream, 8.0), "the stream outlived its token"
        # At the token's expiry, three seconds after it was made: not before the subprocess began,
        # not long after it ended (however long a loaded machine took to run it).
        ended = time.monotonic()
        assert ended - asked > 2.5 and ended - made_by < 3.0 + 2.0, (ended - asked, ended - made_by)
    finally:
        stream.close()


def test_an_http_sse_stream_ends_when_its_user_is_deactivated(server: LiveServer,
                                                             oauth_env: Mapping[str, str]) -> None:
    create_user(oauth_env, "dora", "dora-pass-1")
    token = personal_token(oauth_env, "dora")
    session = SseSession.open(server, headers={"Authorization": f"Bearer {token}"})
    try:
        assert not ends_within(session.stream, 1.2)
        django(oauth_env, "from django.contrib.auth import get_user_model; "
                          "get_user_model().objects.filter(username='dora').update(is_active=False)")
        assert ends_within(session.stream, 5.0), "the stream outlived its user's deactivation"
    finally:
        session.close()


@pytest.fixture(scope="module")
def unchecked_server(oauth_env: Mapping[str, str]) -> Iterator[LiveServer]:
    """The same, but credentials checked again only once an hour: what ends a stream is the announcement."""
    env = {**oauth_env, "MCP_TEST_KEEPALIVE": "0.5", "MCP_TEST_CREDENTIAL_CHECK": "3600"}
    with LiveServer(env=env, name="stream-credentials-announced") as started:
        yield started


def test_a_token_revoked_at_the_endpoint_ends_its_streams_at_once(unchecked_server: LiveServer) -> None:
    discovery, client, tokens, browser = flow.full_flow(unchecked_server.mcp_url, unchecked_server.url, "carol",
                                                        PASSWORDS["carol"])
    browser.close()
    headers, stream = open_legacy(unchecked_server, tokens.access_token)
    try:
        assert not ends_within(stream, 1.0)
        assert flow.revoke(discovery, client["client_id"], tokens.access_token).status_code == 200
        started = time.monotonic()
        assert ends_within(stream, 5.0), "the stream outlived its revoked token"
        assert time.monotonic() - started < 2.0
        assert request(unchecked_server, "POST", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers).status == 401
    finally:
        stream.close()
