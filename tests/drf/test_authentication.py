"""
``django_mcp.drf.DRFAuthentication``: the project's DRF authentication classes authenticate MCP
requests (``REST_FRAMEWORK`` of ``tests.settings``: DRF's session and Basic classes, then its
``TokenAuthentication``). In process here, through the test client, both eras; against a live
daphne server with the official SDK client in ``test_authentication_live.py``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication as DRFBaseAuthentication
from rest_framework.authtoken.models import Token

from django_mcp.authentication import IncomingRequest
from django_mcp.drf import DRFAuthentication
from django_mcp.test import ErrorResponse, McpClient


VERSIONS = ["2026-07-28", "2025-11-25"]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_apis_token_calls_tools_as_its_user(version, django_user_model):
    token = Token.objects.create(user=django_user_model.objects.create_user("ada"))
    client = McpClient(version)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.call_tool("whoami").text == "ada"


def test_basic_authentication_with_the_users_password(django_user_model):
    django_user_model.objects.create_user("bea", password="s3cret-pass")
    client = McpClient()
    client.credentials(HTTP_AUTHORIZATION="Basic " + base64.b64encode(b"bea:s3cret-pass").decode())
    assert client.call_tool("whoami").text == "bea"


@pytest.mark.parametrize("version", VERSIONS)
def test_an_unknown_token_is_refused_with_drfs_message_and_challenge(version, db):
    client = McpClient(version)
    client.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef")
    with pytest.raises(ErrorResponse) as refused:
        client.call_tool("whoami")
    assert refused.value.status == 401 and "Invalid token" in refused.value.message
    # As DRF's APIView would answer: the scheme of the first class that names one (Basic).
    assert refused.value.headers["www-authenticate"] == 'Basic realm="api"'


def test_an_inactive_users_token_is_refused(django_user_model):
    token = Token.objects.create(user=django_user_model.objects.create_user("cid", is_active=False))
    client = McpClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    with pytest.raises(ErrorResponse) as refused:
        client.call_tool("whoami")
    assert refused.value.status == 401 and "inactive" in refused.value.message


def test_a_wrong_password_is_refused(django_user_model):
    django_user_model.objects.create_user("dan", password="right-pass")
    client = McpClient()
    client.credentials(HTTP_AUTHORIZATION="Basic " + base64.b64encode(b"dan:wrong-pass").decode())
    with pytest.raises(ErrorResponse) as refused:
        client.call_tool("whoami")
    assert refused.value.status == 401


# --- the class alone -------------------------------------------------------------------------------


class TeamHeader(DRFBaseAuthentication):
    """A project's own DRF class: reads a header of its choosing, records what DRF showed it."""

    seen: list[Any] = []

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        self.seen.append((request.method, request.path, request.META.get("HTTP_X_TEAM"),
                          request.META.get("REMOTE_ADDR")))
        team = request.META.get("HTTP_X_TEAM")
        if team is None:
            return None
        if team != "blue":
            raise exceptions.AuthenticationFailed("No such team")
        from django.contrib.auth import get_user_model

        return get_user_model().objects.get(username="eve"), "team:blue"

    def authenticate_header(self, request: Any) -> str:
        return 'Team realm="mcp"'


def http_request(headers: dict[str, str]) -> IncomingRequest:
    scope = {"type": "http", "method": "POST", "path": "/mcp", "root_path": "", "query_string": b"",
             "client": ("203.0.113.9", 50000), "server": ("testserver", 80),
             "headers": [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]}
    return IncomingRequest("http", headers=headers, scope=scope)


@pytest.fixture
def eve(django_user_model):
    TeamHeader.seen = []
    return django_user_model.objects.create_user("eve")


@pytest.mark.django_db(transaction=True)
async def test_a_project_class_sees_the_request_as_drf_shows_it(eve) -> None:
    authentication = DRFAuthentication([TeamHeader], credential_headers=["x-team"])
    user, auth = await authentication.authenticate(http_request({"x-team": "blue"}))
    assert user.username == "eve" and auth == "team:blue"
    assert TeamHeader.seen == [("POST", "/mcp", "blue", "203.0.113.9")]


@pytest.mark.django_db(transaction=True)
async def test_a_refusal_carries_the_classes_message_and_scheme(eve) -> None:
    authentication = DRFAuthentication([TeamHeader], credential_headers=["x-team"])
    request = http_request({"x-team": "red"})
    with pytest.raises(Exception) as refused:
        await authentication.authenticate(request)
    assert type(refused.value).__name__ == "AuthenticationFailed" and "No such team" in str(refused.value)
    assert authentication.authenticate_header(request) == 'Team realm="mcp"'


@pytest.mark.django_db(transaction=True)
async def test_a_request_without_a_credential_header_never_reaches_the_classes(eve) -> None:
    assert await DRFAuthentication([TeamHeader], credential_headers=["x-team"]).authenticate(http_request({})) is None
    assert TeamHeader.seen == []
    # None: every request goes to the classes, which find nothing here.
    assert await DRFAuthentication([TeamHeader], credential_headers=None).authenticate(http_request({})) is None
    assert len(TeamHeader.seen) == 1


async def test_stdio_has_no_http_request_to_show_drf() -> None:
    authentication = DRFAuthentication([TeamHeader], credential_headers=None)
    assert await authentication.authenticate(IncomingRequest("stdio")) is None
    assert authentication.authenticate_header(IncomingRequest("stdio")) is None


def test_the_default_classes_are_rest_frameworks(settings) -> None:
    names = [type(authenticator).__name__ for authenticator in DRFAuthentication().get_authenticators()]
    assert names == ["SessionAuthentication", "BasicAuthentication", "TokenAuthentication"]
    named = DRFAuthentication(["rest_framework.authentication.TokenAuthentication"]).get_authenticators()
    assert [type(authenticator).__name__ for authenticator in named] == ["TokenAuthentication"]
