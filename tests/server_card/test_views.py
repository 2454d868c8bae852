"""
``django_mcp.server_card.views`` and ``urls``, in process: the card at ``/mcp/server-card`` with the
draft's media type, CORS and caching (experimental-ext-server-card ``docs/discovery.md`` at 8924e086),
the same for every client.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from django_mcp.server_card.card import MEDIA_TYPE
from django_mcp.server_card.views import ServerCardView
from tests.server_card.schemas import card_errors
from tests.server_card.test_card import guarded_site


URL = "/mcp/server-card"


def test_the_card_is_at_the_reserved_location(client):
    assert reverse("mcp-server-card") == URL
    response = client.get(URL, HTTP_ACCEPT=MEDIA_TYPE)
    assert response.status_code == 200
    assert response["Content-Type"] == MEDIA_TYPE
    card = json.loads(response.content)
    assert card_errors(card) == []
    assert card["remotes"][0]["url"] == "http://testserver/mcp"  # no PUBLIC_BASE_URL: the request's own host


def test_the_caching_and_cors_headers(client):
    response = client.get(URL)
    assert response["Cache-Control"] == "public, max-age=3600"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Access-Control-Expose-Headers"] == "ETag"
    assert response["ETag"].startswith('"') and response["ETag"].endswith('"')
    assert "Accept" in response["Vary"]
    assert "Set-Cookie" not in response


def test_the_public_base_url_names_the_remotes(client):
    with override_settings(DJANGO_MCP={**settings.DJANGO_MCP, "PUBLIC_BASE_URL": "https://mcp.example.com"}):
        card = client.get(URL).json()
    assert [remote["url"] for remote in card["remotes"]] == ["https://mcp.example.com/mcp", "https://mcp.example.com/sse"]


@pytest.mark.parametrize(("accept", "expected"), [
    (None, MEDIA_TYPE),
    (MEDIA_TYPE, MEDIA_TYPE),
    ("application/json", "application/json"),
    ("application/json, application/mcp-server-card+json", MEDIA_TYPE),
    ("text/html,application/xhtml+xml,*/*;q=0.8", MEDIA_TYPE),  # a browser's
    ("application/*", MEDIA_TYPE),
])
def test_the_media_type_is_negotiated(client, accept, expected):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    response = client.get(URL, **headers)
    assert response.status_code == 200 and response["Content-Type"] == expected


def test_an_unacceptable_type_is_refused(client):
    response = client.get(URL, HTTP_ACCEPT="text/html")
    assert response.status_code == 406
    assert MEDIA_TYPE in response.content.decode()
    assert response["Access-Control-Allow-Origin"] == "*"


def test_the_etag_is_honoured_with_304(client):
    first = client.get(URL)
    again = client.get(URL, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == first["ETag"]
    assert again["Cache-Control"] == "public, max-age=3600"
    assert again["Access-Control-Allow-Origin"] == "*"
    assert client.get(URL, HTTP_IF_NONE_MATCH='"something-else"').status_code == 200
    # Another representation (plain JSON) has another tag.
    assert client.get(URL, HTTP_ACCEPT="application/json")["ETag"] != first["ETag"]


def test_the_etag_follows_the_card(client):
    first = client.get(URL)["ETag"]
    with override_settings(DJANGO_MCP={**settings.DJANGO_MCP, "SERVER_VERSION": "9.9.9"}):
        changed = client.get(URL, HTTP_IF_NONE_MATCH=first)
    assert changed.status_code == 200 and changed.json()["version"] == "9.9.9" and changed["ETag"] != first


def test_head_has_the_headers_and_no_body(client):
    get = client.get(URL)
    head = client.head(URL)
    assert head.status_code == 200 and head.content == b""
    assert head["Content-Length"] == str(len(get.content))
    assert head["ETag"] == get["ETag"] and head["Content-Type"] == MEDIA_TYPE


def test_a_cors_preflight(client):
    response = client.options(URL, HTTP_ORIGIN="https://inspector.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
                              HTTP_ACCESS_CONTROL_REQUEST_HEADERS="if-none-match, MCP-Protocol-Version, bad header")
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Access-Control-Allow-Methods"] == "GET, HEAD"
    assert response["Access-Control-Allow-Headers"] == "Content-Type, If-None-Match, mcp-protocol-version"
    assert response["Access-Control-Max-Age"] == str(settings.DJANGO_MCP.get("CORS_MAX_AGE", 7200))
    assert "Access-Control-Request-Headers" in response["Vary"]


def test_options_without_a_preflight(client):
    response = client.options(URL)
    assert response.status_code == 204 and response["Allow"] == "GET, HEAD, OPTIONS"
    assert "Access-Control-Allow-Methods" not in response


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
def test_the_card_is_read_only(client, method):
    assert getattr(client, method)(URL).status_code == 405


@pytest.mark.django_db
def test_every_client_gets_the_same_card(client, django_user_model):
    """Signed in or not, the same bytes: the card depends on no credential, session or permission."""
    anonymous = client.get(URL)
    client.force_login(django_user_model.objects.create_superuser("card-admin", "a@example.com", "pw"))
    signed_in = client.get(URL)
    assert signed_in.content == anonymous.content and signed_in["ETag"] == anonymous["ETag"]


def test_a_hidden_tool_is_not_in_the_card_of_any_user(rf, admin_user):
    view = ServerCardView.as_view(site=guarded_site(), endpoint="staff/mcp")
    for user in (None, admin_user):
        request = rf.get("/staff/mcp/server-card")
        if user is not None:
            request.user = user
        response = view(request)
        body = response.content.decode()
        assert response.status_code == 200 and card_errors(json.loads(body)) == []
        assert "secret_staff_tool" not in body and "open_catalogue_search" not in body
        assert json.loads(body)["remotes"][0]["url"] == "http://testserver/staff/mcp"


def test_the_view_is_public_under_login_required_middleware(client):
    assert ServerCardView.as_view().login_required is False
    middleware = [*settings.MIDDLEWARE, "django.contrib.auth.middleware.LoginRequiredMiddleware"]
    with override_settings(MIDDLEWARE=middleware):
        assert client.get(URL).status_code == 200


def test_max_age_is_an_option(rf):
    response = ServerCardView.as_view(max_age=60)(rf.get(URL))
    assert response["Cache-Control"] == "public, max-age=60"
