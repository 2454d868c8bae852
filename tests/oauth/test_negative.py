"""
What the authorization server and the MCP endpoints refuse, over real HTTP against a live server:
each refusal has the right status and error, and nothing is issued or changed by it
(RFC 6749, RFC 7591, RFC 7636, RFC 8707, RFC 9700; MCP spec 2025-11-25, basic/authorization).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx2

from tests.live import LiveServer

from . import flow
from .conftest import PASSWORDS
from .flow import create_user


def query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def registered(server: LiveServer) -> tuple[flow.Discovery, dict]:
    discovery = flow.discover(server.mcp_url)
    return discovery, flow.register(discovery)


def refused_without_code(response: httpx2.Response) -> str:
    """The error of a refused authorization: in the redirect to the client, or on the server's page."""
    if response.is_redirect:
        query = query_of(response.headers["location"])
        assert "code" not in query, response.headers["location"]
        return query["error"][0]
    assert "authorizationForm" not in response.text
    assert response.status_code == 400, response.status_code
    return response.text


def test_authorization_without_pkce_or_with_plain_pkce_is_refused(oauth_server: LiveServer) -> None:
    discovery, client = registered(oauth_server)
    browser = flow.Browser(oauth_server.url)
    url = flow.authorization_url(discovery, client["client_id"], "x" * 43)
    without = url.replace("code_challenge=", "ignored=").replace("code_challenge_method=S256", "")
    assert "invalid_request" in refused_without_code(browser.attempt(without, "alice", PASSWORDS["alice"]))
    # DOT refuses "plain" when it would create the code, after consent: no code reaches the client.
    plain = flow.authorization_url(discovery, client["client_id"], "v" * 50, method="plain")
    callback = browser.authorize(plain, "alice", PASSWORDS["alice"])
    assert "code" not in query_of(callback) and query_of(callback)["error"] == ["invalid_request"], callback
    browser.close()


def test_a_wrong_code_verifier_gets_no_token(oauth_server: LiveServer) -> None:
    discovery, client = registered(oauth_server)
    verifier, challenge = flow.pkce_pair()
    browser = flow.Browser(oauth_server.url)
    code = flow.code_from(browser.authorize(flow.authorization_url(discovery, client["client_id"], challenge),
                                            "alice", PASSWORDS["alice"]))
    browser.close()
    refused = flow.exchange(discovery, client["client_id"], code, flow.pkce_pair()[0])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert "access_token" not in refused.json()
    assert verifier  # the right one was never sent


def test_unregistered_and_open_redirects_are_never_followed(oauth_server: LiveServer) -> None:
    discovery, client = registered(oauth_server)
    _, challenge = flow.pkce_pair()
    browser = flow.Browser(oauth_server.url)
    for target in ("http://127.0.0.1:9/elsewhere", "https://evil.example/callback"):
        url = flow.authorization_url(discovery, client["client_id"], challenge, redirect_uri=target)
        response = browser.attempt(url, "alice", PASSWORDS["alice"])
        # An error page on the server itself, never a redirect to the unverified URI (RFC 6749 4.1.2.1).
        assert not response.is_redirect, response.headers.get("location")
        assert response.status_code == 400 and "authorizationForm" not in response.text
    browser.close()


def test_a_token_for_another_resource_is_never_issued(oauth_server: LiveServer) -> None:
    discovery, client = registered(oauth_server)
    verifier, challenge = flow.pkce_pair()
    browser = flow.Browser(oauth_server.url)
    url = flow.authorization_url(discovery, client["client_id"], challenge, resource="https://other.example/mcp")
    callback = browser.authorize(url, "alice", PASSWORDS["alice"])
    browser.close()
    refused = flow.exchange(discovery, client["client_id"], flow.code_from(callback), verifier,
                            resource="https://other.example/mcp")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_target", refused.text


def test_tampered_tokens_and_tokens_in_the_url_are_refused(oauth_server: LiveServer) -> None:
    _, _, tokens, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice", PASSWORDS["alice"])
    browser.close()
    tampered = tokens.access_token[:-1] + ("A" if tokens.access_token[-1] != "A" else "B")
    refused = flow.mcp_post(oauth_server.mcp_url, tampered, flow.INITIALIZE)
    assert refused.status_code == 401
    assert flow.challenge_params(refused.headers["www-authenticate"])["error"] == "invalid_token"
    in_url = httpx2.post(f"{oauth_server.mcp_url}?access_token={tokens.access_token}", json=flow.INITIALIZE,
                         headers=flow.MCP_HEADERS)
    assert in_url.status_code == 401
    assert flow.challenge_params(in_url.headers["www-authenticate"])["error"] == "invalid_request"
    # Also when the header carries the same valid token: the URL copy may already be in a log.
    both = httpx2.post(f"{oauth_server.mcp_url}?access_token=x", json=flow.INITIALIZE,
                       headers={**flow.MCP_HEADERS, "authorization": f"Bearer {tokens.access_token}"})
    assert both.status_code == 401
    assert flow.mcp_post(oauth_server.mcp_url, tokens.access_token, flow.INITIALIZE).status_code == 200


def test_a_deactivated_users_token_stops_working(oauth_server: LiveServer, oauth_env) -> None:
    create_user(oauth_env, "dora", "dora-pass-1")
    _, _, tokens, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "dora", "dora-pass-1")
    browser.close()
    assert flow.mcp_post(oauth_server.mcp_url, tokens.access_token, flow.INITIALIZE).status_code == 200
    create_user(oauth_env, "dora", "dora-pass-1", active=False)
    refused = flow.mcp_post(oauth_server.mcp_url, tokens.access_token, flow.INITIALIZE)
    assert refused.status_code == 401


def test_registration_is_lenient_where_clients_are_sloppy_and_strict_on_redirects(oauth_server: LiveServer) -> None:
    discovery = flow.discover(oauth_server.mcp_url)
    endpoint = discovery.server["registration_endpoint"]
    sloppy = httpx2.post(endpoint, json={
        "client_name": "sloppy", "redirect_uris": ["http://localhost:33418/callback"],
        "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
        "response_types": ["code"], "token_endpoint_auth_method": "none", "application_type": "native"})
    assert sloppy.status_code == 201, sloppy.text
    assert sloppy.json()["grant_types"] == ["authorization_code", "refresh_token"]
    secret_post = httpx2.post(endpoint, json={"redirect_uris": ["https://app.example/cb"],
                                              "token_endpoint_auth_method": "client_secret_post"})
    assert secret_post.status_code == 201 and secret_post.json().get("client_secret")
    for uri in ("http://app.example/cb", "https://app.example/cb#frag", "javascript:alert(1)"):
        refused = httpx2.post(endpoint, json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"})
        assert refused.status_code == 400, (uri, refused.text)
        assert refused.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata"), refused.text
    # A client whose registration was lost registers again and gets a new, working client.
    again = [flow.register(discovery)["client_id"] for _ in range(2)]
    assert again[0] != again[1]


def test_a_registration_access_token_opens_nothing(oauth_server: LiveServer) -> None:
    discovery = flow.discover(oauth_server.mcp_url)
    registration_token = flow.register(discovery)["registration_access_token"]
    refused = flow.mcp_post(oauth_server.mcp_url, registration_token, flow.INITIALIZE)
    assert refused.status_code == 401
