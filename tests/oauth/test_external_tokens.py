"""
``django_mcp.oauth.external``: JWT access tokens of an outside authorization server (issue 41,
part 1, first step). The issuer here is a local HTTP server publishing RFC 8414 metadata and a
JWK Set, with keys the test holds, so that every kind of bad token can be made: wrong audience,
wrong issuer, expired, not yet valid, a forged signature, an unknown key id before and after a
fetch of the keys, ``alg`` confusion (``none``, HS256 keyed with the public key). Requests go
through the real ASGI application in process (``McpClient``), both eras.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import override_settings
from jwcrypto import jwk, jwt

from django_mcp.oauth.checks import check_external_issuers
from django_mcp.oauth.external import access_tokens
from django_mcp.oauth.external import keys as external_keys
from django_mcp.oauth.models import ExternalIdentity
from django_mcp.test import ErrorResponse, McpClient


AUDIENCE = "http://testserver/mcp"
RSA = jwk.JWK.generate(kty="RSA", size=2048, kid="rsa-1")
EC = jwk.JWK.generate(kty="EC", crv="P-256", kid="ec-2")
STRANGER = jwk.JWK.generate(kty="RSA", size=2048, kid="rsa-1")  # the same kid, another key: a forger's


class Issuer:
    """A local authorization server's metadata and keys, served over HTTP; counts the key fetches."""

    def __init__(self) -> None:
        self.published = [RSA]
        self.key_fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path == "/.well-known/oauth-authorization-server":
                    body = {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks"}
                elif self.path == "/jwks":
                    issuer.key_fetches += 1
                    body = {"keys": [key.export_public(as_dict=True) for key in issuer.published]}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def token(self, key: jwk.JWK = RSA, alg: str = "RS256", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.url, "sub": "alice-sub", "aud": AUDIENCE, "iat": now, "exp": now + 300,
                "scope": "mcp:tools mcp:resources", **claims}
        body = {name: value for name, value in body.items() if value is not None}
        signed = jwt.JWT(header={"alg": alg, "kid": key.key_id, "typ": "at+jwt"}, claims=body)
        signed.make_signed_token(key)
        return signed.serialize()


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer()
    yield server
    server.server.shutdown()


@pytest.fixture
def trusting(issuer: Issuer, db) -> Iterator[Issuer]:
    """The test settings, trusting ``issuer`` (first among the authentication classes), keys not cached yet."""
    issuer.published = [RSA]
    external_keys.key_sets.fetched.clear()
    access_tokens.signed_claims.entries.clear()
    mcp = {**django_settings.DJANGO_MCP,
           "OAUTH_EXTERNAL_ISSUERS": [{"issuer": issuer.url, "create_users": True, "token_type": "at+jwt"}],
           "DEFAULT_AUTHENTICATION_CLASSES": ["django_mcp.oauth.external.ExternalTokenAuthentication",
                                              "django_mcp.oauth.authentication.OAuth2Authentication"]}
    with override_settings(DJANGO_MCP=mcp):
        yield issuer
    external_keys.key_sets.fetched.clear()


def whoami(token: str, version: str = "2026-07-28") -> str:
    client = McpClient(version)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.call_tool("whoami").text


def refusal(token: str) -> tuple[str, str]:
    """(the 401's error_description, its WWW-Authenticate) for ``token``."""
    with pytest.raises(ErrorResponse) as refused:
        whoami(token)
    assert refused.value.status == 401, refused.value
    challenge = refused.value.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge, challenge
    return refused.value.message, challenge


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_a_token_of_the_issuer_calls_tools_as_its_subject(trusting: Issuer, version: str) -> None:
    assert whoami(trusting.token(), version) == "alice-sub@127.0.0.1 mcp:resources mcp:tools"
    link = ExternalIdentity.objects.get(issuer=trusting.url, subject="alice-sub")
    assert link.user.username == "alice-sub@127.0.0.1" and not link.user.has_usable_password()


def test_a_linked_subject_is_its_user_and_the_keys_are_fetched_once(trusting: Issuer, django_user_model) -> None:
    ada = django_user_model.objects.create_user("ada")
    ExternalIdentity.objects.create(issuer=trusting.url, subject="ada-at-idp", user=ada)
    before = trusting.key_fetches
    assert whoami(trusting.token(sub="ada-at-idp", scope="mcp:tools")) == "ada mcp:tools"
    assert whoami(trusting.token(sub="ada-at-idp", scope=None, scp=["mcp:prompts"])) == "ada mcp:prompts"
    assert trusting.key_fetches == before + 1


@pytest.mark.parametrize(("claims", "reason"), [
    ({"aud": "https://another.example/mcp"}, "meant for another resource"),
    ({"aud": None}, "meant for another resource"),
    ({"exp": int(time.time()) - 120}, "has expired"),
    ({"exp": None}, "has no expiry"),
    ({"nbf": int(time.time()) + 600}, "not valid yet"),
])
def test_claims_that_do_not_fit_are_refused(trusting: Issuer, claims: dict[str, Any], reason: str) -> None:
    message, _ = refusal(trusting.token(**claims))
    assert reason in message


def test_a_token_is_checked_once_while_its_claims_are_checked_on_every_use(trusting: Issuer, monkeypatch) -> None:
    checked = []
    real = access_tokens._signed_claims
    monkeypatch.setattr(access_tokens, "_signed_claims", lambda *args: checked.append(1) or real(*args))
    token = trusting.token(exp=int(time.time()) + 2)
    assert whoami(token).startswith("alice-sub") and whoami(token).startswith("alice-sub")
    assert len(checked) == 1  # the signature once; the second request found it in the cache
    entry = next(iter(access_tokens.signed_claims.entries.values()))
    assert entry[0] <= time.time() + 2 + 30  # kept no later than exp + leeway
    external_keys.key_sets.fetched[trusting.url].at -= external_keys.MAX_AGE  # so the keys are fetched again
    assert whoami(token).startswith("alice-sub")  # another key set: the signature is checked again
    assert len(checked) == 2
    # An hour later the cached claims are checked again, and the token has expired.
    later = time.time() + 3600
    monkeypatch.setattr(access_tokens, "time", types.SimpleNamespace(time=lambda: later))
    assert "has expired" in refusal(token)[0]


def test_a_token_within_the_leeway_is_taken(trusting: Issuer) -> None:
    assert whoami(trusting.token(exp=int(time.time()) - 10, nbf=int(time.time()) + 10)).startswith("alice-sub")


def test_a_forged_signature_is_refused(trusting: Issuer) -> None:
    message, _ = refusal(trusting.token(key=STRANGER))
    assert "signature does not verify" in message


def test_alg_none_and_hmac_with_the_public_key_are_refused(trusting: Issuer) -> None:
    now = int(time.time())
    claims = {"iss": trusting.url, "sub": "alice-sub", "aud": AUDIENCE, "exp": now + 300}

    def compact(header: dict[str, Any], signature: bytes) -> str:
        def part(value: bytes) -> str:
            return base64.urlsafe_b64encode(value).rstrip(b"=").decode()
        signing_input = f"{part(json.dumps(header).encode())}.{part(json.dumps(claims).encode())}"
        return f"{signing_input}.{part(signature)}"

    unsigned = compact({"alg": "none", "typ": "at+jwt"}, b"")
    assert "algorithm is not one" in refusal(unsigned)[0]
    # HS256 keyed with the issuer's public key, which anyone can download: the classic confusion.
    public_pem = RSA.export_to_pem()
    header = {"alg": "HS256", "kid": "rsa-1", "typ": "at+jwt"}
    signing_input = compact(header, b"").rsplit(".", 1)[0]
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    assert "algorithm is not one" in refusal(signing_input + "." + base64.urlsafe_b64encode(mac)
                                             .rstrip(b"=").decode())[0]


def test_a_rotated_key_is_fetched_once_and_an_unknown_one_not_again_within_the_floor(trusting: Issuer) -> None:
    assert whoami(trusting.token()).startswith("alice-sub")  # keys fetched: RSA only
    fetched = trusting.key_fetches
    external_keys.key_sets.fetched[trusting.url].at -= external_keys.REFRESH_FLOOR  # as if a while ago
    trusting.published = [RSA, EC]  # the issuer rotates in a new key
    assert whoami(trusting.token(key=EC, alg="ES256")).startswith("alice-sub")
    assert trusting.key_fetches == fetched + 1
    stranger = jwk.JWK.generate(kty="EC", crv="P-256", kid="nobody-knows")
    for _ in range(3):  # tokens with made-up key ids do not make this server fetch the keys again
        assert "does not publish" in refusal(trusting.token(key=stranger, alg="ES256"))[0]
    assert trusting.key_fetches == fetched + 1


def test_an_untrusted_issuer_is_left_to_the_next_class(trusting: Issuer) -> None:
    message, _ = refusal(trusting.token(iss="https://elsewhere.example"))
    assert "unknown, expired or revoked" in message  # OAuth2Authentication's word for a token it lacks


def test_a_wrong_token_type_is_refused(trusting: Issuer) -> None:
    signed = jwt.JWT(header={"alg": "RS256", "kid": "rsa-1", "typ": "JWT"},
                     claims={"iss": trusting.url, "sub": "alice-sub", "aud": AUDIENCE, "exp": int(time.time()) + 60})
    signed.make_signed_token(RSA)
    assert "not of type at+jwt" in refusal(signed.serialize())[0]


def test_an_inactive_user_is_refused(trusting: Issuer, django_user_model) -> None:
    cid = django_user_model.objects.create_user("cid", is_active=False)
    ExternalIdentity.objects.create(issuer=trusting.url, subject="cid-at-idp", user=cid)
    assert "inactive" in refusal(trusting.token(sub="cid-at-idp"))[0]


def test_by_email_only_when_the_issuer_verified_it(trusting: Issuer, django_user_model) -> None:
    django_user_model.objects.create_user("dee", email="Dee@Example.com")
    mcp = {**django_settings.DJANGO_MCP,
           "OAUTH_EXTERNAL_ISSUERS": [{"issuer": trusting.url, "user_claim": "email"}]}
    with override_settings(DJANGO_MCP=mcp):
        assert whoami(trusting.token(sub="x", email="dee@example.com", email_verified=True)).startswith("dee ")
        assert "not verified" in refusal(trusting.token(sub="x", email="dee@example.com"))[0]
        assert "no user" in refusal(trusting.token(sub="x", email="eve@example.com", email_verified=True))[0]


def test_the_resource_metadata_names_the_issuer_first(trusting: Issuer, client) -> None:
    document = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert document["authorization_servers"] == [trusting.url, "http://testserver"]


def test_the_checks_refuse_weak_algorithms_plain_http_and_unknown_keys() -> None:
    entries = [{"issuer": "http://idp.example", "algorithms": ["RS256", "HS256", "none"], "audiance": "x"},
               {"issuer": "https://idp.example", "user_claim": "nickname"}, {"jwks_uri": "https://idp.example/k"}]
    with override_settings(DJANGO_MCP={**django_settings.DJANGO_MCP, "OAUTH_EXTERNAL_ISSUERS": entries}):
        ids = sorted(message.id for message in check_external_issuers())
    assert ids == ["django_mcp.oauth.E004", "django_mcp.oauth.E004", "django_mcp.oauth.E004",
                   "django_mcp.oauth.E005", "django_mcp.oauth.E006"]
