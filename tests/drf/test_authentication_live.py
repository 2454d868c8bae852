"""
DRF credentials on a live daphne server (``live_server_mcp``: ``tests.settings``, whose MCP
classes end with ``django_mcp.drf.DRFAuthentication`` and whose ``REST_FRAMEWORK`` names DRF's
``TokenAuthentication``): the official SDK client, in each of its modes and over HTTP+SSE, calls
tools with the token the API issued, and a wrong token gets a 401 with DRF's challenge.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Mapping

import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.live import ROOT, LiveServer, server_env
from tests.oauth import flow


def api_token(env: Mapping[str, str], username: str) -> str:
    """A user and their DRF token in the live server's database, made by a process of its own."""
    code = ("import django; django.setup(); from django.contrib.auth import get_user_model; "
            "from rest_framework.authtoken.models import Token; "
            f"user, _ = get_user_model().objects.get_or_create(username={username!r}); "
            "print(Token.objects.get_or_create(user=user)[0].key)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def token(sqlite_server_env: Mapping[str, str]) -> str:
    return api_token(sqlite_server_env, "api-user")


@pytest.mark.parametrize("mode", ["auto", "legacy", "2026-07-28"])
def test_the_sdk_client_calls_tools_with_the_apis_token(live_server_mcp: LiveServer, token: str, mode: str) -> None:
    async def whoami() -> str:
        async with asyncio.timeout(20), httpx2.AsyncClient(headers={"authorization": f"Token {token}"}) as http:
            async with Client(streamable_http_client(live_server_mcp.mcp_url, http_client=http), mode=mode) as client:
                return (await client.call_tool("whoami", {})).content[0].text

    assert asyncio.run(whoami()) == "api-user"


def test_http_sse_with_the_apis_token(live_server_mcp: LiveServer, token: str) -> None:
    async def whoami() -> str:
        async with asyncio.timeout(20), sse_client(f"{live_server_mcp.url}/sse",
                                                   headers={"authorization": f"Token {token}"}) as streams:
            async with Client(flow.OpenStreams(streams), mode="legacy") as client:
                return (await client.call_tool("whoami", {})).content[0].text

    assert asyncio.run(whoami()) == "api-user"


def test_a_wrong_token_gets_401_with_drfs_challenge(live_server_mcp: LiveServer, token: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "drf-test", "version": "1"}}}
    reply = httpx2.post(live_server_mcp.mcp_url, json=message, timeout=10,
                        headers={"authorization": f"Token {token[::-1]}",
                                 "accept": "application/json, text/event-stream"})
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"] == 'Basic realm="api"'
    assert "Invalid token" in reply.json()["error"]["message"]
