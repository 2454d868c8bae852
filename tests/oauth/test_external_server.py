"""
An outside authorization server, for real (issue 41, part 1): one live daphne server is the
authorization server — django-oauth-toolkit, with its RFC 7662 introspection endpoint — and a
second one, with its own database and users, is the resource server that trusts it
(``OAUTH_EXTERNAL_ISSUERS``, set through ``MCP_TEST_EXTERNAL_ISSUER`` in ``tests.settings``). The
official SDK's OAuth client connects to the resource server, finds the authorization server in
its RFC 9728 metadata, registers and gets a token there, and calls tools here; the resource server
asks the authorization server about each token (its tokens are opaque). A token revoked there is
refused here once the cached answer is older than ``introspection_cache_seconds``; a token the
authorization server bound to another resource is refused.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping

import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client

from tests.live import ROOT, LiveServer, free_port, fresh_sqlite_env, server_env

from . import flow
from .conftest import PASSWORDS
from .test_sdk_client import MemoryStorage, ScriptedUser, call_whoami, provider


CLIENT_ID, CLIENT_SECRET = "resource-server", "resource-server-secret-0123456789"
WHOAMI = "mcp:prompts mcp:resources mcp:tools"


@pytest.fixture(scope="module")
def ports() -> tuple[int, int]:
    """(the authorization server's, the resource server's): each must know the other's URL."""
    return free_port(), free_port()


@pytest.fixture(scope="module")
def oauth_server(oauth_env: Mapping[str, str], ports: tuple[int, int]) -> Iterator[LiveServer]:
    """The authorization server: the test settings with OAuth, issuing tokens for the resource server too."""
    env = {**oauth_env, "MCP_TEST_OTHER_RESOURCES": f"http://127.0.0.1:{ports[1]}/mcp"}
    with LiveServer(env=env, name="authorization-server", port=ports[0]) as server:
        yield server


@pytest.fixture(scope="module")
def introspection_client(oauth_env: Mapping[str, str]) -> None:
    """The resource server's credentials at the authorization server: a confidential client."""
    code = ("import django; django.setup(); from oauth2_provider.models import Application; "
            f"Application.objects.filter(client_id={CLIENT_ID!r}).delete(); "
            f"Application.objects.create(client_id={CLIENT_ID!r}, client_secret={CLIENT_SECRET!r}, "
            "name='resource server', client_type='confidential', authorization_grant_type='client-credentials')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(oauth_env), timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def resource_server(tmp_path_factory: pytest.TempPathFactory, oauth_server: LiveServer, ports: tuple[int, int],
                    introspection_client: None) -> Iterator[LiveServer]:
    """The resource server: its own database and users, trusting the authorization server."""
    env = fresh_sqlite_env(tmp_path_factory.mktemp("resource-server"))
    issuer = {"issuer": oauth_server.url, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
              "user_claim": "username", "create_users": True, "introspection_cache_seconds": 1}
    env.update(MCP_TEST_OAUTH="1", MCP_TEST_EXTERNAL_ISSUER=json.dumps(issuer))
    with LiveServer(env=env, name="resource-server", port=ports[1]) as server:
        yield server


def whoami(server: LiveServer, token: str) -> httpx2.Response:
    """A 2026-07-28 tools/call of whoami with ``token``, as one stateless POST."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "external-server-test", "version": "1"}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "whoami", "arguments": {}, "_meta": meta}}
    return flow.mcp_post(server.mcp_url, token, message, **{"mcp-protocol-version": "2026-07-28",
                                                            "mcp-method": "tools/call", "mcp-name": "whoami"})


def test_the_metadata_sends_clients_to_the_outside_server(resource_server: LiveServer,
                                                          oauth_server: LiveServer) -> None:
    document = httpx2.get(f"{resource_server.url}/.well-known/oauth-protected-resource/mcp").json()
    assert document["resource"] == resource_server.mcp_url
    assert document["authorization_servers"] == [oauth_server.url, resource_server.url]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_gets_its_token_there_and_calls_tools_here(resource_server: LiveServer,
                                                                  oauth_server: LiveServer, mode: str) -> None:
    storage = MemoryStorage()
    user = ScriptedUser(oauth_server.url)  # the person signs in at the authorization server
    try:
        said = asyncio.run(call_whoami(resource_server, provider(resource_server, storage, user), mode))
    finally:
        user.browser.close()
    # alice of the resource server: made on her first token (create_users), by the username the
    # authorization server's introspection answer gives.
    assert said == f"alice {WHOAMI}"
    assert storage.tokens is not None and user.visits == 1


def test_a_token_revoked_at_the_issuer_is_refused_once_the_answer_is_old(resource_server: LiveServer,
                                                                         oauth_server: LiveServer) -> None:
    discovery, client, tokens, browser = flow.full_flow(resource_server.mcp_url, oauth_server.url, "carol",
                                                        PASSWORDS["carol"])
    browser.close()
    assert discovery.server["issuer"] == oauth_server.url  # discovered through the resource server
    answered = whoami(resource_server, tokens.access_token)
    assert answered.status_code == 200 and answered.json()["result"]["content"][0]["text"] == f"carol {WHOAMI}"
    assert flow.revoke(discovery, client["client_id"], tokens.access_token).status_code == 200
    time.sleep(1.5)  # introspection_cache_seconds is 1 on this resource server
    refused = whoami(resource_server, tokens.access_token)
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_a_token_bound_to_another_resource_is_refused(resource_server: LiveServer, oauth_server: LiveServer) -> None:
    # A token the authorization server issued for its own MCP endpoint: active, but not for this one.
    _, _, tokens, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice", PASSWORDS["alice"])
    browser.close()
    refused = whoami(resource_server, tokens.access_token)
    assert refused.status_code == 401
    assert "meant for another resource" in refused.json()["error"]["message"]


def test_http_sse_with_the_outside_servers_token(resource_server: LiveServer, oauth_server: LiveServer) -> None:
    _, _, tokens, browser = flow.full_flow(resource_server.mcp_url, oauth_server.url, "alice", PASSWORDS["alice"])
    browser.close()

    async def over_sse() -> str:
        async with asyncio.timeout(20), sse_client(f"{resource_server.url}/sse",
                                                   headers={"authorization": f"Bearer {tokens.access_token}"}
                                                   ) as streams:
            async with Client(flow.OpenStreams(streams), mode="legacy") as client:
                return (await client.call_tool("whoami", {})).content[0].text

    assert asyncio.run(over_sse()) == f"alice {WHOAMI}"
