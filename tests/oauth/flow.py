"""
An MCP client's OAuth journey, step by step over real HTTP (httpx2, as the ``mcp`` SDK uses):
discovery from the 401, both metadata documents, registration, the login and consent pages as a
browser submits them, and the token exchange with PKCE. Each step is its own function so the
negative tests can stop at any point and tamper.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2

from tests.live import ROOT, server_env


REDIRECT_URI = "http://127.0.0.1:8765/callback"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "oauth-test", "version": "1"}}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')


def create_user(env: Mapping[str, str], username: str, password: str, *, staff: bool = False,
                active: bool = True) -> None:
    """Create (or reset) a user in the live server's database, from a process of its own."""
    code = ("import django; django.setup(); from django.contrib.auth import get_user_model; "
            f"U = get_user_model(); u, _ = U.objects.get_or_create(username={username!r}); "
            f"u.is_staff = u.is_superuser = {staff!r}; u.is_active = {active!r}; u.set_password({password!r}); "
            "u.save()")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), timeout=60,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout


def challenge_params(header: str) -> dict[str, str]:
    """The auth-params of a ``WWW-Authenticate: Bearer k="v",…`` header."""
    assert header.startswith("Bearer"), header
    return {key: value.replace('\\"', '"') for key, value in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', header)}


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@dataclass
class Discovery:
    """What a client learns before it registers."""

    challenge: dict[str, str]
    resource: dict[str, Any]
    server: dict[str, Any]


@dataclass
class Tokens:
    access_token: str
    refresh_token: str | None
    scope: str
    raw: dict[str, Any] = field(default_factory=dict)


def discover(mcp_url: str) -> Discovery:
    """401 → RFC 9728 document → RFC 8414 document, as MCP spec 2025-11-25, basic/authorization describes."""
    response = httpx2.post(mcp_url, json=INITIALIZE, headers=MCP_HEADERS)
    assert response.status_code == 401, response.text
    challenge = challenge_params(response.headers["www-authenticate"])
    resource = httpx2.get(challenge["resource_metadata"]).json()
    issuer = resource["authorization_servers"][0]
    server = httpx2.get(issuer.rstrip("/") + "/.well-known/oauth-authorization-server").json()
    return Discovery(challenge, resource, server)


def register(discovery: Discovery, redirect_uri: str = REDIRECT_URI, **extra: Any) -> dict[str, Any]:
    metadata = {"client_name": "OAuth test client", "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "token_endpoint_auth_method": "none", **extra}
    response = httpx2.post(discovery.server["registration_endpoint"], json=metadata)
    assert response.status_code == 201, response.text
    return response.json()


class Browser:
    """A user's browser on the authorization server: cookies, the login form, the consent form."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.http = httpx2.Client(base_url=base_url, follow_redirects=False)
        self.consent_page = ""

    def close(self) -> None:
        self.http.close()

    def _follow(self, response: httpx2.Response) -> httpx2.Response:
        """Follow redirects on this server only; a redirect elsewhere (the client's callback) stops."""
        while response.is_redirect:
            target = response.headers["location"]
            if target.startswith("http") and not target.startswith(self.base_url):
                return response
            response = self.http.get(target)
        return response

    def login(self, response: httpx2.Response, username: str, password: str) -> httpx2.Response:
        page = response.text
        token = _CSRF.search(page)
        assert token, page[:500]
        login_url = str(response.url)
        query = parse_qs(urlsplit(login_url).query)
        return self._follow(self.http.post(login_url, data={
            "csrfmiddlewaretoken": token.group(1), "username": username, "password": password,
            "next": query.get("next", ["/"])[0]}))

    def attempt(self, authorize_url: str, username: str, password: str) -> httpx2.Response:
        """Open the authorization URL and log in if asked: the consent page, an error page or a redirect."""
        response = self._follow(self.http.get(authorize_url))
        if "login-form" in response.text:
            response = self.login(response, username, password)
        return response

    def authorize(self, authorize_url: str, username: str, password: str, *, allow: bool = True) -> str:
        """Open the authorization URL, log in if asked, answer the consent page; the callback URL."""
        response = self.attempt(authorize_url, username, password)
        if response.is_redirect:
            return response.headers["location"]  # an error redirect before consent
        assert response.status_code == 200 and "authorizationForm" in response.text, response.text[:1000]
        self.consent_page = response.text
        fields = dict(_HIDDEN.findall(response.text))
        if allow:
            fields["allow"] = "Authorize"
        answer = self.http.post(str(response.url), data=fields)
        assert answer.is_redirect, answer.text[:1000]
        return answer.headers["location"]


def authorization_url(discovery: Discovery, client_id: str, challenge: str, *, state: str = "st4te",
                      resource: str | None = None, scope: str | None = None, redirect_uri: str = REDIRECT_URI,
                      method: str = "S256") -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": state,
              "code_challenge": challenge, "code_challenge_method": method,
              "scope": scope if scope is not None else discovery.challenge.get("scope", ""),
              "resource": resource if resource is not None else discovery.resource["resource"]}
    return discovery.server["authorization_endpoint"] + "?" + urlencode(params)


def code_from(callback: str, state: str = "st4te") -> str:
    query = parse_qs(urlsplit(callback).query)
    assert query.get("state") == [state], callback
    assert "code" in query, callback
    return query["code"][0]


def exchange(discovery: Discovery, client_id: str, code: str, verifier: str, *, redirect_uri: str = REDIRECT_URI,
             resource: str | None = None) -> httpx2.Response:
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "client_id": client_id,
            "code_verifier": verifier, "resource": resource or discovery.resource["resource"]}
    return httpx2.post(discovery.server["token_endpoint"], data=data)


def tokens_of(response: httpx2.Response) -> Tokens:
    assert response.status_code == 200, response.text
    body = response.json()
    return Tokens(body["access_token"], body.get("refresh_token"), body.get("scope", ""), body)


def full_flow(mcp_url: str, base_url: str, username: str, password: str, **authorize: Any,
              ) -> tuple[Discovery, dict[str, Any], Tokens, Browser]:
    """Discovery, registration, login, consent and token: what a client does on first connect."""
    discovery = discover(mcp_url)
    client = register(discovery)
    verifier, challenge = pkce_pair()
    browser = Browser(base_url)
    callback = browser.authorize(authorization_url(discovery, client["client_id"], challenge, **authorize),
                                 username, password)
    tokens = tokens_of(exchange(discovery, client["client_id"], code_from(callback), verifier))
    return discovery, client, tokens, browser


def refresh(discovery: Discovery, client_id: str, refresh_token: str) -> httpx2.Response:
    return httpx2.post(discovery.server["token_endpoint"], data={
        "grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id})


def revoke(discovery: Discovery, client_id: str, token: str) -> httpx2.Response:
    return httpx2.post(discovery.server["revocation_endpoint"], data={"token": token, "client_id": client_id})


def mcp_post(mcp_url: str, token: str | None, message: dict[str, Any], **headers: str) -> httpx2.Response:
    all_headers = {**MCP_HEADERS, **headers}
    if token is not None:
        all_headers["authorization"] = f"Bearer {token}"
    return httpx2.post(mcp_url, json=message, headers=all_headers)


class OpenStreams:
    """An already-open pair of SDK streams as an ``mcp.Client`` transport (the SDK's SSE client yields streams)."""

    def __init__(self, streams: Any) -> None:
        self.streams = streams

    async def __aenter__(self) -> Any:
        return self.streams

    async def __aexit__(self, *exc: Any) -> None:
        return None
