"""
The Server Card over a real socket: daphne serving ``tests.asgi`` (``django_mcp.asgi.application``
in front of Django), fetched with httpx2 as a client that discovers the server would, then checked
against what the server says once connected (the draft's "Consistency with Runtime Behavior",
experimental-ext-server-card ``docs/discovery.md`` at 8924e086).
"""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from mcp import Client

from django_mcp.server_card.card import MEDIA_TYPE
from tests.live import LiveServer
from tests.server_card.schemas import card_errors


pytestmark = pytest.mark.live


def card_url(server: LiveServer) -> str:
    return f"{server.mcp_url}/server-card"


def test_the_card_over_http(live_server_mcp: LiveServer) -> None:
    response = httpx2.get(card_url(live_server_mcp), headers={"accept": MEDIA_TYPE}, timeout=20)
    assert response.status_code == 200
    assert response.headers["content-type"] == MEDIA_TYPE
    assert response.headers["cache-control"] == "public, max-age=3600"
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["access-control-expose-headers"] == "ETag"
    card = response.json()
    assert card_errors(card) == []
    remotes = {remote["type"]: remote["url"] for remote in card["remotes"]}
    assert remotes == {"streamable-http": live_server_mcp.mcp_url, "sse": f"{live_server_mcp.url}/sse"}

    again = httpx2.get(card_url(live_server_mcp), headers={"accept": MEDIA_TYPE,
                                                           "if-none-match": response.headers["etag"]}, timeout=20)
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == response.headers["etag"]

    head = httpx2.head(card_url(live_server_mcp), timeout=20)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(response.content))


def test_a_browser_preflight_over_http(live_server_mcp: LiveServer) -> None:
    response = httpx2.options(card_url(live_server_mcp), timeout=20, headers={
        "origin": "https://inspector.example", "access-control-request-method": "GET",
        "access-control-request-headers": "if-none-match"})
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == "*"
    assert "GET" in response.headers["access-control-allow-methods"]
    assert "If-None-Match" in response.headers["access-control-allow-headers"]


async def test_the_card_agrees_with_the_connected_server(live_server_mcp: LiveServer) -> None:
    """The card's endpoint serves MCP, and the server it reaches says what the card says."""
    async with httpx2.AsyncClient(timeout=20) as http:
        card = json.loads((await http.get(card_url(live_server_mcp))).content)
    remote = next(remote for remote in card["remotes"] if remote["type"] == "streamable-http")
    async with asyncio.timeout(30):
        async with Client(remote["url"], mode="auto") as client:
            assert client.server_info is not None
            assert client.server_info.version == card["version"]
            assert card["name"].endswith("/" + client.server_info.name)
            assert client.protocol_version in remote["supportedProtocolVersions"]
