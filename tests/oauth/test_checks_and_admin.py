"""The OAuth system checks, and personal access tokens made in the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from oauth2_provider.settings import oauth2_settings

from django_mcp.oauth.checks import check_oauth, check_oauth_deployment
from django_mcp.oauth.models import PersonalAccessToken
from django_mcp.oauth.provider import oauth2_provider_settings


def ids(found) -> set[str]:
    return {message.id for message in found}


def test_recommended_settings_pass_the_checks() -> None:
    with override_settings(DEBUG=False, DJANGO_MCP={"PUBLIC_BASE_URL": "https://mcp.example.com"},
                           OAUTH2_PROVIDER=oauth2_provider_settings()):
        assert check_oauth() == [] and check_oauth_deployment() == []


@pytest.mark.parametrize(("provider", "mcp", "debug", "expected"), [
    ({"PKCE_REQUIRED": False}, {"PUBLIC_BASE_URL": "https://x"}, False, "django_mcp.oauth.E002"),
    ({"COMPLIANT_BCP_RFC9700_PKCE_METHOD": False}, {"PUBLIC_BASE_URL": "https://x"}, False, "django_mcp.oauth.W001"),
    ({}, {}, False, "django_mcp.oauth.E003"),
    ({}, {"PUBLIC_BASE_URL": "http://x"}, False, "django_mcp.oauth.W002"),
    ({"DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.IsAuthenticatedDCRPermission",)},
     {"PUBLIC_BASE_URL": "https://x"}, True, "django_mcp.oauth.W003"),
    ({"DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",)},
     {"PUBLIC_BASE_URL": "https://x"}, False, "django_mcp.oauth.W004"),
])
def test_each_mistake_is_reported(provider, mcp, debug, expected) -> None:
    with override_settings(DEBUG=debug, DJANGO_MCP=mcp, OAUTH2_PROVIDER=oauth2_provider_settings(**provider)):
        assert expected in ids(check_oauth()) | ids(check_oauth_deployment())
    oauth2_settings.reload()


@pytest.mark.django_db
def test_admin_creates_a_token_shown_once_and_stored_hashed(client) -> None:
    admin = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(admin)
    response = client.post("/admin/django_mcp_oauth/personalaccesstoken/add/", {
        "user": admin.pk, "name": "laptop", "scopes": ["mcp:tools", "mcp:resources"], "expires_0": "", "expires_1": ""},
        follow=True)
    assert response.status_code == 200
    token = PersonalAccessToken.objects.get()
    shown = [str(message) for message in response.context["messages"]]
    raw = next(word for text in shown for word in text.split() if word.startswith("mcp_pat_"))
    assert token.scope == "mcp:tools mcp:resources" and token.hint == raw[8:16]
    assert raw not in client.get("/admin/django_mcp_oauth/personalaccesstoken/").content.decode()
    assert raw not in client.get(f"/admin/django_mcp_oauth/personalaccesstoken/{token.pk}/change/").content.decode()
    client.post("/admin/django_mcp_oauth/personalaccesstoken/", {"action": "revoke_tokens",
                                                                  "_selected_action": [token.pk]})
    token.refresh_from_db()
    assert token.revoked is not None


@pytest.mark.django_db
def test_the_admin_revokes_every_token_of_a_client(client) -> None:
    from datetime import timedelta

    from django.utils import timezone
    from oauth2_provider.models import get_access_token_model, get_application_model

    admin = get_user_model().objects.create_superuser("root", password="pw")
    application = get_application_model().objects.create(name="Claude", client_type="public",
                                                          authorization_grant_type="authorization-code",
                                                          redirect_uris="http://127.0.0.1/cb")
    get_access_token_model().objects.create(user=admin, application=application, token="t", token_checksum="c" * 64,
                                            expires=timezone.now() + timedelta(hours=1), scope="mcp:tools")
    client.force_login(admin)
    url = f"/admin/{application._meta.app_label}/{application._meta.model_name}/"
    assert "Claude" in client.get(url).content.decode()
    client.post(url, {"action": "revoke_client_tokens", "_selected_action": [application.pk]})
    assert not get_access_token_model().objects.filter(application=application).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("redirect", "allowed"), [
    ("https://claude.ai/api/mcp/auth_callback", True),
    ("https://evil.example/cb", False),
    ("http://127.0.0.1:4242/cb", True),
    ("http://claude.ai/cb", False),
])
def test_an_allow_list_registration_policy(client, redirect, allowed) -> None:
    provider = oauth2_provider_settings(
        DCR_REGISTRATION_PERMISSION_CLASSES=("django_mcp.oauth.registration.AllowListedRedirectHosts",))
    with override_settings(OAUTH2_PROVIDER=provider, DJANGO_MCP={"OAUTH_ALLOWED_REDIRECT_HOSTS": ["claude.ai"]}):
        response = client.post("/oauth/register/", {"redirect_uris": [redirect], "token_endpoint_auth_method": "none"},
                               content_type="application/json")
    oauth2_settings.reload()
    assert response.status_code == (201 if allowed else 400), response.content
