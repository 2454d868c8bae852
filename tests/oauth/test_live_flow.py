"""
The whole OAuth flow against a live daphne server with authentication required (MCP spec
2025-11-25, basic/authorization): discovery from the 401, both metadata documents, dynamic
registration, login and consent pages, authorization code + PKCE, the token on every transport
and era, refresh, revocation, step-up for a scope beyond the defaults, personal access tokens.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.live import ROOT, LiveServer, server_env

from . import flow
from .conftest import PASSWORDS


DEFAULT_SCOPE = "mcp:tools mcp:resources mcp:prompts"
WHOAMI_ALICE = "alice mcp:prompts mcp:resources mcp:tools"


def modern(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "oauth-test", "version": "1"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name:
        headers["mcp-name"] = name
    return headers


async def whoami(server: LiveServer, token: str, mode: str) -> str:
    async with asyncio.timeout(20), httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode) as client:
            result = await client.call_tool("whoami", {})
            return result.content[0].text


def test_missing_token_gets_a_challenge_clients_can_follow(oauth_server: LiveServer) -> None:
    base = oauth_server.url
    response = flow.mcp_post(oauth_server.mcp_url, None, flow.INITIALIZE)
    assert response.status_code == 401
    params = flow.challenge_params(response.headers["www-authenticate"])
    assert params == {"scope": DEFAULT_SCOPE, "resource_metadata": f"{base}/.well-known/oauth-protected-resource/mcp"}
    assert response.json()["error"]["code"] == -32600
    # The 2026-07-28 path and the HTTP+SSE pair answer the same way, naming their own document.
    modern_response = flow.mcp_post(oauth_server.mcp_url, None, modern(1, "tools/list", {}), **modern_headers(
        "tools/list"))
    assert modern_response.status_code == 401
    for path in ("/sse", "/messages/?session_id=x"):
        method = httpx2.get if path == "/sse" else httpx2.post
        refused = method(base + path, headers={"accept": "text/event-stream"}) if path == "/sse" else method(
            base + path, json=flow.INITIALIZE)
        assert refused.status_code == 401, path
        assert flow.challenge_params(refused.headers["www-authenticate"])["resource_metadata"] == (
            f"{base}/.well-known/oauth-protected-resource/sse")


def test_metadata_documents(oauth_server: LiveServer) -> None:
    base = oauth_server.url
    discovery = flow.discover(oauth_server.mcp_url)
    assert discovery.resource["resource"] == f"{base}/mcp"
    assert discovery.resource["authorization_servers"] == [base]
    assert set(DEFAULT_SCOPE.split()) <= set(discovery.resource["scopes_supported"])
    assert discovery.resource["bearer_methods_supported"] == ["header"]
    assert httpx2.get(f"{base}/.well-known/oauth-protected-resource").json()["resource"] == base
    assert httpx2.get(f"{base}/.well-known/oauth-protected-resource/sse").json()["resource"] == f"{base}/sse"
    assert httpx2.get(f"{base}/.well-known/oauth-protected-resource/elsewhere").status_code == 404
    server = discovery.server
    assert server["issuer"] == base
    assert server["authorization_endpoint"] == f"{base}/oauth/authorize/"
    assert server["token_endpoint"] == f"{base}/oauth/token/"
    assert server["registration_endpoint"] == f"{base}/oauth/register/"
    assert server["revocation_endpoint"] == f"{base}/oauth/revoke/"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert "none" in server["token_endpoint_auth_methods_supported"]
    assert server["response_types_supported"] == ["code"]
    assert set(server["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert server["client_id_metadata_document_supported"] is True


def test_legacy_fallback_endpoints(oauth_server: LiveServer) -> None:
    """2025-03-26 clients without metadata use /authorize, /token and /register at the root."""
    base = oauth_server.url
    redirect = httpx2.get(f"{base}/authorize?client_id=x&response_type=code")
    assert redirect.status_code == 302
    assert redirect.headers["location"] == "/oauth/authorize/?client_id=x&response_type=code"
    assert httpx2.post(f"{base}/token", data={"grant_type": "authorization_code", "code": "nope"}).status_code in (
        400, 401)
    registered = httpx2.post(f"{base}/register", json={"redirect_uris": [flow.REDIRECT_URI],
                                                       "token_endpoint_auth_method": "none"})
    assert registered.status_code == 201, registered.text


def test_full_flow_then_every_era_and_transport(oauth_server: LiveServer) -> None:
    discovery, client, tokens, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice",
                                                        PASSWORDS["alice"])
    browser.close()
    # The consent page names the client and says in plain words what it may do.
    assert "OAuth test client" in browser.consent_page
    assert "Use the tools this site offers you" in browser.consent_page
    assert "Read the data this site shares with you" in browser.consent_page
    assert "alice" in browser.consent_page
    assert set(tokens.scope.split()) == set(DEFAULT_SCOPE.split())
    for mode in ("legacy", "auto", "2026-07-28"):
        assert asyncio.run(whoami(oauth_server, tokens.access_token, mode)) == WHOAMI_ALICE, mode

    async def over_sse() -> str:
        async with asyncio.timeout(20), sse_client(f"{oauth_server.url}/sse",
                                                   headers={"authorization": f"Bearer {tokens.access_token}"},
                                                   ) as streams:
            async with Client(flow.OpenStreams(streams), mode="legacy") as sdk:
                return (await sdk.call_tool("whoami", {})).content[0].text

    assert asyncio.run(over_sse()) == WHOAMI_ALICE


def test_refresh_then_revocation(oauth_server: LiveServer) -> None:
    discovery, client, tokens, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice",
                                                        PASSWORDS["alice"])
    browser.close()
    refreshed = flow.tokens_of(flow.refresh(discovery, client["client_id"], tokens.refresh_token))
    assert refreshed.access_token != tokens.access_token and refreshed.refresh_token != tokens.refresh_token
    assert asyncio.run(whoami(oauth_server, refreshed.access_token, "2026-07-28")) == WHOAMI_ALICE
    assert flow.revoke(discovery, client["client_id"], refreshed.access_token).status_code == 200
    refused = flow.mcp_post(oauth_server.mcp_url, refreshed.access_token, flow.INITIALIZE)
    assert refused.status_code == 401
    assert flow.challenge_params(refused.headers["www-authenticate"])["error"] == "invalid_token"


def test_step_up_for_a_scope_beyond_the_defaults(oauth_server: LiveServer) -> None:
    discovery, client, tokens, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice",
                                                        PASSWORDS["alice"])
    call = modern(2, "tools/call", {"name": "read_secret", "arguments": {}})
    listed = flow.mcp_post(oauth_server.mcp_url, tokens.access_token, modern(1, "tools/list", {}),
                           **modern_headers("tools/list")).json()
    assert "read_secret" not in {tool["name"] for tool in listed["result"]["tools"]}
    refused = flow.mcp_post(oauth_server.mcp_url, tokens.access_token, call,
                            **modern_headers("tools/call", "read_secret"))
    assert refused.status_code == 403
    params = flow.challenge_params(refused.headers["www-authenticate"])
    assert params["error"] == "insufficient_scope"
    assert set(params["scope"].split()) == {*DEFAULT_SCOPE.split(), "tests:secrets"}
    assert refused.json()["error"]["data"]["requiredScopes"] == sorted(params["scope"].split())
    # The client asks the user again for the scopes the challenge named, and the call goes through.
    verifier, challenge = flow.pkce_pair()
    callback = browser.authorize(flow.authorization_url(discovery, client["client_id"], challenge,
                                                        scope=params["scope"]), "alice", PASSWORDS["alice"])
    browser.close()
    assert "Read the test suite&#x27;s secrets" in browser.consent_page
    wider = flow.tokens_of(flow.exchange(discovery, client["client_id"], flow.code_from(callback), verifier))
    answer = flow.mcp_post(oauth_server.mcp_url, wider.access_token, call,
                           **modern_headers("tools/call", "read_secret"))
    assert answer.status_code == 200 and answer.json()["result"]["content"][0]["text"] == "s3cret"


def test_legacy_session_stays_bound_to_the_tokens_user(oauth_server: LiveServer) -> None:
    _, _, alice, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice", PASSWORDS["alice"])
    browser.close()
    _, _, carol, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "carol", PASSWORDS["carol"])
    browser.close()
    opened = flow.mcp_post(oauth_server.mcp_url, alice.access_token, flow.INITIALIZE)
    session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    assert flow.mcp_post(oauth_server.mcp_url, carol.access_token, call, **session).status_code == 404
    assert flow.mcp_post(oauth_server.mcp_url, None, call, **session).status_code == 401
    assert flow.mcp_post(oauth_server.mcp_url, alice.access_token, call, **session).status_code == 200


def mcp_token(env: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", "mcp_token", *args], cwd=ROOT, env=server_env(env),
                          timeout=60, capture_output=True, text=True)


def test_personal_access_token(oauth_server: LiveServer, oauth_env: Any) -> None:
    created = mcp_token(oauth_env, "create", "--user", "alice", "--name", "ci", "--days", "1")
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("mcp_pat_")
    assert asyncio.run(whoami(oauth_server, token, "2026-07-28")) == WHOAMI_ALICE
    assert asyncio.run(whoami(oauth_server, token, "legacy")) == WHOAMI_ALICE
    listing = mcp_token(oauth_env, "list", "--user", "alice").stdout
    assert token[:16] in listing and token not in listing
    assert mcp_token(oauth_env, "revoke", token[:16]).returncode == 0
    refused = flow.mcp_post(oauth_server.mcp_url, token, flow.INITIALIZE)
    assert refused.status_code == 401
    assert flow.challenge_params(refused.headers["www-authenticate"])["error"] == "invalid_token"


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
