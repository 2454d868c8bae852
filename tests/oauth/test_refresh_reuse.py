"""
Refresh token reuse (issue 27, part 4). For public clients, which every MCP client registered
through DCR is, rotation is the replay protection (OAuth 2.1 draft section 4.3.1; RFC 9700
section 4.14.2): a refresh token works once, and a second use of one that was already exchanged
means one of the two parties presenting it is an attacker. So ``oauth2_provider_settings()``
refuses the reuse (``invalid_grant``) and has DOT revoke the rest of that grant.

Over real HTTP against a daphne server: the rotation, the replay, the revoked newer refresh token
and the newer access token refused on ``/mcp``. In-process, with DOT's token endpoint: the grace
period a project may still set, what ``cleartokens`` keeps, and DOT's deploy check.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db.models import F
from django.test import override_settings
from django.utils import timezone
from oauth2_provider.checks import validate_bcp_configuration
from oauth2_provider.models import (
    clear_expired,
    get_access_token_model,
    get_application_model,
    get_refresh_token_model,
    set_token_value,
)

from django_mcp.oauth.provider import oauth2_provider_settings
from tests.live import LiveServer

from . import flow
from .conftest import PASSWORDS


SCOPE = "mcp:tools mcp:resources mcp:prompts"
RESOURCE = "http://testserver/mcp"


def assert_invalid_grant(response: Any) -> None:
    status = getattr(response, "status_code", None)
    body = response.json()
    assert status == 400 and body["error"] == "invalid_grant", (status, body)


# -- the defaults ---------------------------------------------------------------------------------


def test_the_defaults_refuse_reuse_and_revoke_the_grant() -> None:
    settings = oauth2_provider_settings()
    assert settings["ROTATE_REFRESH_TOKEN"] is True
    assert settings["REFRESH_TOKEN_GRACE_PERIOD_SECONDS"] == 0
    assert settings["REFRESH_TOKEN_REUSE_PROTECTION"] is True
    # DOT's own deploy check then makes turning reuse protection off an error, not a warning.
    assert settings["COMPLIANT_BCP_RFC9700_REFRESH_TOKEN"] is True
    # Refresh tokens expire by age, so cleartokens can delete the revoked ones it keeps.
    assert settings["REFRESH_TOKEN_EXPIRE_SECONDS"] == 30 * 24 * 3600
    # A project may still choose a grace period (docs/oauth.md says what it costs).
    assert oauth2_provider_settings(REFRESH_TOKEN_GRACE_PERIOD_SECONDS=10)["REFRESH_TOKEN_GRACE_PERIOD_SECONDS"] == 10


def bcp_ids(provider: dict[str, Any]) -> set[str]:
    with override_settings(OAUTH2_PROVIDER=provider):
        return {message.id for message in validate_bcp_configuration(None)}


def test_dots_deploy_check_guards_reuse_protection() -> None:
    found = bcp_ids(oauth2_provider_settings())
    assert not found & {"oauth2_provider.W007", "oauth2_provider.E002", "oauth2_provider.E001"}
    assert "oauth2_provider.E002" in bcp_ids(oauth2_provider_settings(REFRESH_TOKEN_REUSE_PROTECTION=False))
    assert "oauth2_provider.W007" in bcp_ids(oauth2_provider_settings(REFRESH_TOKEN_REUSE_PROTECTION=False,
                                                                      COMPLIANT_BCP_RFC9700_REFRESH_TOKEN=False))
    # DOT's gate looks at reuse protection only: a grace period passes it.
    with_grace = bcp_ids(oauth2_provider_settings(REFRESH_TOKEN_GRACE_PERIOD_SECONDS=10))
    assert not with_grace & {"oauth2_provider.W007", "oauth2_provider.E002", "oauth2_provider.E001"}


# -- over real HTTP ---------------------------------------------------------------------------------


def test_reusing_a_rotated_refresh_token_revokes_the_whole_grant(oauth_server: LiveServer) -> None:
    discovery, client, first, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice",
                                                       PASSWORDS["alice"])
    browser.close()
    client_id = client["client_id"]
    # Rotation: the old refresh token buys a new pair, and the new access token opens /mcp.
    second = flow.tokens_of(flow.refresh(discovery, client_id, first.refresh_token))
    assert second.refresh_token and second.refresh_token != first.refresh_token
    assert second.access_token != first.access_token
    assert flow.mcp_post(oauth_server.mcp_url, second.access_token, flow.INITIALIZE).status_code == 200

    # The old refresh token again, at once: refused, with no grace period to hide in.
    assert_invalid_grant(flow.refresh(discovery, client_id, first.refresh_token))
    # The replay revoked the rest of the grant: the refresh token it had been replaced by...
    assert_invalid_grant(flow.refresh(discovery, client_id, second.refresh_token))
    # ...and its access token, refused at once on a real MCP request (no per-worker token cache).
    refused = flow.mcp_post(oauth_server.mcp_url, second.access_token, flow.INITIALIZE)
    assert refused.status_code == 401, refused.text
    assert flow.challenge_params(refused.headers["www-authenticate"])["error"] == "invalid_token"
    # The first access token went when its refresh token was exchanged.
    assert flow.mcp_post(oauth_server.mcp_url, first.access_token, flow.INITIALIZE).status_code == 401


def test_another_grant_of_the_same_user_is_untouched(oauth_server: LiveServer) -> None:
    """Only the replayed token's own grant (its DOT token family) is revoked, not the user's others."""
    discovery, client, stolen, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice",
                                                        PASSWORDS["alice"])
    browser.close()
    _, other_client, other, browser = flow.full_flow(oauth_server.mcp_url, oauth_server.url, "alice",
                                                     PASSWORDS["alice"])
    browser.close()
    flow.tokens_of(flow.refresh(discovery, client["client_id"], stolen.refresh_token))
    assert_invalid_grant(flow.refresh(discovery, client["client_id"], stolen.refresh_token))
    assert flow.mcp_post(oauth_server.mcp_url, other.access_token, flow.INITIALIZE).status_code == 200
    assert flow.tokens_of(flow.refresh(discovery, other_client["client_id"], other.refresh_token)).access_token


# -- in-process, on DOT's token endpoint --------------------------------------------------------------


def issue_pair(access: str = "at-0", refresh: str = "rt-0") -> tuple[Any, Any]:
    """What the authorization code exchange leaves behind: an application, an access and a refresh token."""
    user = get_user_model().objects.create_user("dora")
    application = get_application_model().objects.create(name="c", client_type="public",
                                                          authorization_grant_type="authorization-code",
                                                          redirect_uris="http://127.0.0.1/cb")
    access_token = get_access_token_model()(user=user, application=application, scope=SCOPE, resource=[RESOURCE],
                                            expires=timezone.now() + timedelta(hours=1))
    set_token_value(access_token, access)
    access_token.save()
    refresh_token = get_refresh_token_model()(user=user, application=application, access_token=access_token,
                                              token_family=uuid.uuid4(), resource=[RESOURCE])
    set_token_value(refresh_token, refresh)
    refresh_token.save()
    return application, refresh_token


def refresh(client: Any, application: Any, token: str) -> Any:
    return client.post("/oauth/token/", {"grant_type": "refresh_token", "refresh_token": token,
                                         "client_id": application.client_id})


def age_revocation(token: str, seconds: float) -> None:
    """Move a refresh token's revocation ``seconds`` into the past, as if that much time had gone by."""
    get_refresh_token_model().objects.filter(token=token).update(revoked=F("revoked") - timedelta(seconds=seconds))


@pytest.mark.django_db
def test_a_project_may_set_a_grace_period(client) -> None:
    with override_settings(OAUTH2_PROVIDER=oauth2_provider_settings(REFRESH_TOKEN_GRACE_PERIOD_SECONDS=10)):
        application, _ = issue_pair()
        rotated = refresh(client, application, "rt-0")
        assert rotated.status_code == 200, rotated.content
        pair = rotated.json()
        # Within the window the superseded token is honoured again, and answers with the pair the
        # first exchange made: a client that lost that answer gets it again (and so would a thief).
        again = refresh(client, application, "rt-0")
        assert again.status_code == 200, again.content
        assert (again.json()["access_token"], again.json()["refresh_token"]) == (pair["access_token"],
                                                                                 pair["refresh_token"])
        # Not just once: as often as it is replayed within the window, nothing revoked.
        assert refresh(client, application, "rt-0").json()["refresh_token"] == pair["refresh_token"]
        # Past the window, the same replay is reuse: refused, and the grant revoked with it.
        age_revocation("rt-0", 11)
        assert_invalid_grant(refresh(client, application, "rt-0"))
        assert_invalid_grant(refresh(client, application, pair["refresh_token"]))
        assert not get_access_token_model().objects.filter(application=application).exists()


@pytest.mark.django_db
def test_a_grace_period_honours_only_the_token_just_replaced(client) -> None:
    """Once the newer pair was itself rotated, a replay of the older token is reuse, grace or not."""
    with override_settings(OAUTH2_PROVIDER=oauth2_provider_settings(REFRESH_TOKEN_GRACE_PERIOD_SECONDS=10)):
        application, _ = issue_pair()
        second = refresh(client, application, "rt-0").json()
        third = refresh(client, application, second["refresh_token"]).json()
        assert_invalid_grant(refresh(client, application, "rt-0"))
        assert_invalid_grant(refresh(client, application, third["refresh_token"]))


@pytest.mark.django_db
def test_a_grace_period_never_honours_a_token_revoked_on_purpose(client) -> None:
    with override_settings(OAUTH2_PROVIDER=oauth2_provider_settings(REFRESH_TOKEN_GRACE_PERIOD_SECONDS=10)):
        application, _ = issue_pair()
        revoked = client.post("/oauth/revoke/", {"token": "rt-0", "token_type_hint": "refresh_token",
                                                 "client_id": application.client_id})
        assert revoked.status_code == 200
        assert_invalid_grant(refresh(client, application, "rt-0"))


@pytest.mark.django_db
def test_the_default_refuses_reuse_at_once(client) -> None:
    with override_settings(OAUTH2_PROVIDER=oauth2_provider_settings()):
        application, _ = issue_pair()
        pair = refresh(client, application, "rt-0").json()
        assert_invalid_grant(refresh(client, application, "rt-0"))
        assert_invalid_grant(refresh(client, application, pair["refresh_token"]))
        assert not get_access_token_model().objects.filter(application=application).exists()


@pytest.mark.django_db
def test_cleartokens_keeps_revoked_refresh_tokens_for_their_lifetime_so_reuse_is_still_detected(client) -> None:
    """
    DOT's ``clear_expired`` (``manage.py cleartokens``) keeps rotated-out tokens under reuse
    protection for ``REFRESH_TOKEN_EXPIRE_SECONDS`` (30 days by default) after their revocation.
    """
    refresh_tokens = get_refresh_token_model().objects
    with override_settings(OAUTH2_PROVIDER=oauth2_provider_settings()):
        application, _ = issue_pair()
        pair = refresh(client, application, "rt-0").json()
        age_revocation("rt-0", 29 * 24 * 3600)
        clear_expired()
        assert refresh_tokens.filter(token="rt-0", revoked__isnull=False).exists()
        # A replay weeks after the rotation is still caught, and still revokes the grant.
        assert_invalid_grant(refresh(client, application, "rt-0"))
        assert_invalid_grant(refresh(client, application, pair["refresh_token"]))
        age_revocation("rt-0", 31 * 24 * 3600)
        clear_expired()
        assert not refresh_tokens.filter(token="rt-0").exists()
        assert refresh_tokens.filter(token=pair["refresh_token"]).exists()  # revoked 0 s ago: kept
    # Without a lifetime, revoked refresh tokens are never deleted.
    with override_settings(OAUTH2_PROVIDER=oauth2_provider_settings(REFRESH_TOKEN_EXPIRE_SECONDS=None)):
        age_revocation(pair["refresh_token"], 365 * 24 * 3600)
        clear_expired()
        assert refresh_tokens.filter(token=pair["refresh_token"]).exists()
