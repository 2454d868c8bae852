"""
The official ``mcp`` SDK's OAuth client (``OAuthClientProvider``) against a live server: it finds
the metadata from the 401, registers itself, sends the user to the authorization URL (here a
scripted browser logs in and consents), exchanges the code with PKCE, and calls tools in every
client mode. A second client reuses the stored registration and tokens without a browser.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.live import LiveServer

from . import flow
from .conftest import PASSWORDS


WHOAMI_ALICE = "alice mcp:prompts mcp:resources mcp:tools"


class MemoryStorage:
    """The SDK's ``TokenStorage``, in memory: what a client keeps between connections."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class ScriptedUser:
    """Stands in for the person at the browser: logs in (as alice by default) and presses Allow."""

    def __init__(self, base_url: str, username: str = "alice", password: str | None = None) -> None:
        self.username, self.password = username, password or PASSWORDS[username]
        self.browser = flow.Browser(base_url)
        self.callback: str | None = None
        self.visits = 0

    async def redirect_handler(self, authorization_url: str) -> None:
        self.visits += 1
        self.callback = await asyncio.to_thread(self.browser.authorize, authorization_url, self.username,
                                                self.password)

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.callback is not None
        query = parse_qs(urlsplit(self.callback).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])


def provider(server: Any, storage: MemoryStorage, user: ScriptedUser | None) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(client_name="SDK test client", redirect_uris=[flow.REDIRECT_URI],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    handlers: dict[str, Any] = {}
    if user is not None:
        handlers = {"redirect_handler": user.redirect_handler, "callback_handler": user.callback_handler}
    return OAuthClientProvider(server.mcp_url, metadata, storage, **handlers)


async def call_whoami(server: LiveServer, auth: OAuthClientProvider, mode: str) -> str:
    async with asyncio.timeout(30), httpx2.AsyncClient(auth=auth, timeout=20) as http:
        async with Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "whoami" in names and "read_secret" not in names
            return (await client.call_tool("whoami", {})).content[0].text


@pytest.mark.parametrize("mode", ["legacy", "auto", "2026-07-28"])
def test_sdk_oauth_client(oauth_server: LiveServer, mode: str) -> None:
    storage = MemoryStorage()
    user = ScriptedUser(oauth_server.url)
    try:
        assert asyncio.run(call_whoami(oauth_server, provider(oauth_server, storage, user), mode)) == WHOAMI_ALICE
    finally:
        user.browser.close()
    assert user.visits == 1
    assert "SDK test client" in user.browser.consent_page
    assert storage.client_info is not None and storage.client_info.client_id
    assert storage.tokens is not None and storage.tokens.refresh_token
    # A later connection reuses the stored client and token: no browser this time.
    assert asyncio.run(call_whoami(oauth_server, provider(oauth_server, storage, None), mode)) == WHOAMI_ALICE
