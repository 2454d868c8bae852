"""The resource server's decisions in-process: which tokens pass, and what the challenge says."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from django_mcp.authentication import AuthenticationFailed, IncomingRequest
from django_mcp.context import Context
from django_mcp.oauth.authentication import OAuth2Authentication, PersonalAccessTokenAuthentication
from django_mcp.oauth.models import PersonalAccessToken
from django_mcp.protocol.context import RequestContext
from django_mcp.protocol.versions import Era
from django_mcp.tools import Tool

from .flow import challenge_params


pytestmark = pytest.mark.django_db(transaction=True)
SCOPE = "mcp:tools mcp:resources mcp:prompts"


def request(token: str | None = None, path: str = "/mcp", query: bytes = b"") -> IncomingRequest:
    headers = [(b"host", b"testserver")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    scope = {"type": "http", "path": path, "scheme": "http", "headers": headers, "query_string": query}
    return IncomingRequest("streamable-http", scope=scope,
                           raw_headers={name: value.decode("latin-1") for name, value in headers})


def make_token(value: str, *, user=None, resource=("http://testserver/mcp",), scope: str = SCOPE,
               expires_in: int = 3600):
    application = get_application_model().objects.create(name="c", client_type="public",
                                                          authorization_grant_type="authorization-code",
                                                          redirect_uris="http://127.0.0.1/cb")
    token = get_access_token_model()(user=user, application=application, scope=scope, resource=list(resource),
                                     expires=timezone.now() + timedelta(seconds=expires_in))
    from oauth2_provider.models import set_token_value

    set_token_value(token, value)
    token.save()
    return token


async def refusal(req: IncomingRequest, cls=OAuth2Authentication) -> str:
    with pytest.raises(AuthenticationFailed):
        await cls().authenticate(req)
    return req.challenge_params.get("error_description", "")


async def test_bound_tokens_pass_and_everything_else_is_refused() -> None:
    User = get_user_model()
    alice = await User.objects.acreate_user("alice")
    await make_token_async("good", user=alice)
    user, token = await OAuth2Authentication().authenticate(request("good"))
    assert user == alice and token.scope == SCOPE
    # The same server under its other names, with or without a trailing slash.
    for resource in ("http://testserver/mcp/", "http://testserver/sse", "http://testserver"):
        await make_token_async(resource, user=alice, resource=(resource,))
        assert (await OAuth2Authentication().authenticate(request(resource)))[0] == alice
    await make_token_async("expired", user=alice, expires_in=-1)
    await make_token_async("foreign", user=alice, resource=("https://other.example/mcp",))
    await make_token_async("prefix", user=alice, resource=("http://testserver/mcp/admin",))
    await make_token_async("unbound", user=alice, resource=())
    await make_token_async("registration", user=None, scope="oauth2_provider:registration")
    assert "expired" in await refusal(request("expired"))
    assert "unknown" in await refusal(request("missing"))
    assert "another resource" in await refusal(request("foreign"))
    assert "another resource" in await refusal(request("prefix"))
    assert "names no resource" in await refusal(request("unbound"))
    assert "does not grant" in await refusal(request("registration"))
    with override_settings(DJANGO_MCP={"OAUTH_ACCEPT_UNBOUND_TOKENS": True}):
        assert (await OAuth2Authentication().authenticate(request("unbound")))[0] == alice
    with override_settings(DJANGO_MCP={"PUBLIC_BASE_URL": "https://mcp.example.com"}):
        # Behind a proxy the public URL decides, not the Host the request names.
        assert "another resource" in await refusal(request("good"))
    alice.is_active = False
    await alice.asave()
    assert "inactive" in await refusal(request("good"))


async def make_token_async(value: str, **kwargs):
    from asgiref.sync import sync_to_async

    return await sync_to_async(make_token)(value, **kwargs)


async def test_no_header_is_no_credential_and_query_tokens_are_refused() -> None:
    assert await OAuth2Authentication().authenticate(request()) is None
    req = request(None, query=b"access_token=abc")
    await refusal(req)
    assert req.challenge_params["error"] == "invalid_request"
    basic = IncomingRequest("streamable-http", scope={"path": "/mcp"}, headers={"authorization": "Basic eDp5"})
    assert await OAuth2Authentication().authenticate(basic) is None


def test_challenge_names_the_endpoints_metadata_and_scopes() -> None:
    header = OAuth2Authentication().authenticate_header(request())
    assert challenge_params(header) == {
        "scope": SCOPE, "resource_metadata": "http://testserver/.well-known/oauth-protected-resource/mcp"}
    sse = challenge_params(OAuth2Authentication().authenticate_header(request(path="/messages/")))
    assert sse["resource_metadata"] == "http://testserver/.well-known/oauth-protected-resource/sse"
    refused = request("x")
    refused.challenge_params = {"error": "invalid_token", "error_description": 'a "quoted" reason'}
    params = challenge_params(OAuth2Authentication().authenticate_header(refused))
    assert params["error"] == "invalid_token" and params["error_description"] == 'a "quoted" reason'


async def test_personal_access_tokens() -> None:
    from asgiref.sync import sync_to_async

    alice = await get_user_model().objects.acreate_user("alice")
    row, raw = await sync_to_async(PersonalAccessToken.issue)(alice, "ci", "mcp:tools")
    assert raw.startswith("mcp_pat_") and row.digest != raw and raw not in str(row)
    user, token = await PersonalAccessTokenAuthentication().authenticate(request(raw))
    assert user == alice and token.pk == row.pk
    assert (await PersonalAccessToken.objects.aget(pk=row.pk)).last_used is not None
    # OAuth2Authentication leaves these tokens to their own class.
    assert await OAuth2Authentication().authenticate(request(raw)) is None
    await refusal(request("mcp_pat_nope"), PersonalAccessTokenAuthentication)
    await sync_to_async(row.revoke)()
    assert "revoked" in await refusal(request(raw), PersonalAccessTokenAuthentication)
    _, expired = await sync_to_async(PersonalAccessToken.issue)(alice, "old", "", timedelta(seconds=-1))
    await refusal(request(expired), PersonalAccessTokenAuthentication)


def test_mcp_token_command(capsys) -> None:
    get_user_model().objects.create_user("bob")
    call_command("mcp_token", "create", "--user", "bob", "--days", "0")
    raw = capsys.readouterr().out.strip()
    token = PersonalAccessToken.objects.get()
    assert raw.startswith("mcp_pat_") and token.expires is None and token.scope == SCOPE
    call_command("mcp_token", "list")
    assert raw not in capsys.readouterr().out
    call_command("mcp_token", "revoke", raw[:14])
    token.refresh_from_db()
    assert token.revoked is not None


class Lend(Tool):
    """Lend a book."""

    required_scopes = ["library:lend"]

    def call(self) -> str:
        return "ok"


class Scoped:
    def __init__(self, scope: str) -> None:
        self.scope = scope


@override_settings(DJANGO_MCP={"REQUIRED_SCOPES": None})
async def test_scopes_hide_from_listings_and_challenge_calls() -> None:
    tool = Lend()

    def ctx(method: str, scope: str | None) -> Context:
        return Context(RequestContext(era=Era.MODERN, protocol_version="2026-07-28", method=method,
                                      auth=Scoped(scope) if scope is not None else None))

    listing = ctx("tools/list", "mcp:tools")
    assert not await tool.has_permission(listing) and listing.request.scope_challenge is None
    call = ctx("tools/call", "mcp:tools")
    assert not await tool.has_permission(call)
    assert call.request.scope_challenge == {"mcp:tools", "library:lend"}
    assert not await tool.has_permission(ctx("tools/call", "library:lend"))  # the kind's scope is missing
    assert await tool.has_permission(ctx("tools/call", "mcp:tools library:lend"))
    assert await tool.has_permission(ctx("tools/call", None))  # a login session carries no scopes
