"""
OAuth 2.1 on the plain view (``django_mcp.views.McpView``) under gunicorn: the same flow a client
runs against the Channels endpoint — the 401 that names the protected-resource metadata, discovery,
dynamic registration, login, consent, the token — then calls with the token in both eras, on any
of the two worker processes; a revoked token is refused at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live import GunicornServer

from . import flow
from .conftest import PASSWORDS


pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def gunicorn_oauth(oauth_env: Mapping[str, str]) -> Iterator[GunicornServer]:
    with GunicornServer(env=oauth_env, workers=2, name="gunicorn-oauth") as server:
        yield server


def test_a_client_signs_in_and_calls_tools_on_the_plain_view(gunicorn_oauth: GunicornServer) -> None:
    refused = flow.mcp_post(gunicorn_oauth.mcp_url, None, flow.INITIALIZE)
    assert refused.status_code == 401
    assert flow.challenge_params(refused.headers["www-authenticate"])["resource_metadata"].endswith(
        "/.well-known/oauth-protected-resource/mcp")

    discovery, client, tokens, _ = flow.full_flow(gunicorn_oauth.mcp_url, gunicorn_oauth.url, "alice",
                                                  PASSWORDS["alice"])
    assert discovery.resource["resource"] == gunicorn_oauth.mcp_url

    async def call(mode: str) -> str:
        headers = {"authorization": f"Bearer {tokens.access_token}"}
        async with asyncio.timeout(30), httpx2.AsyncClient(headers=headers, timeout=20) as http:
            async with Client(streamable_http_client(gunicorn_oauth.mcp_url, http_client=http), mode=mode) as mcp:
                result = await mcp.call_tool("whoami", {})
                return result.content[0].text

    for mode in ("legacy", "2026-07-28"):
        for _ in range(3):  # whichever worker takes the request
            assert "alice" in asyncio.run(call(mode)), mode

    assert flow.revoke(discovery, client["client_id"], tokens.access_token).status_code == 200
    after = flow.mcp_post(gunicorn_oauth.mcp_url, tokens.access_token, flow.INITIALIZE)
    assert after.status_code == 401
    assert flow.challenge_params(after.headers["www-authenticate"]).get("error") == "invalid_token"
