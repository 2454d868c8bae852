"""
A JWT access token of an outside authorization server, verified: its signature with the issuer's
keys and one of the algorithms the issuer is trusted with (never ``none``, never a symmetric one),
then its claims — ``iss`` exactly the issuer, ``exp`` required and ``nbf`` honoured within a small
leeway, ``aud`` naming this server (RFC 8707, RFC 9068 section 4; MCP spec 2025-11-25,
basic/authorization, "Token Audience Binding and Validation"), scopes from ``scope`` or ``scp``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jwcrypto import jwk, jwt
from jwcrypto.common import JWException, JWKeyNotFound

from .issuers import Issuer

#: Longer bearer values are not taken for JWTs (a header's worth; real access tokens are a few KiB).
MAX_TOKEN_LENGTH = 16 * 1024


class TokenRefused(Exception):
    """The token is not good here; ``str()`` is the reason, as the 401's ``error_description`` says it."""


class UnknownKey(TokenRefused):
    """Signed with a key id the issuer's key set (as fetched) does not have."""


@dataclass(frozen=True)
class ExternalAccessToken:
    """
    A verified access token of an outside authorization server: ``ctx.auth`` of its requests.
    ``issuer`` is its ``iss``, ``subject`` its ``sub`` (None without one), ``expires_at`` its
    ``exp`` (seconds since the epoch); ``scopes`` are what ``ctx.scopes`` and ``HasScopes`` read;
    ``claims`` all the token says.
    """

    issuer: str
    subject: str | None
    scopes: frozenset[str]
    expires_at: float | None
    claims: Mapping[str, Any] = field(repr=False)

    def __str__(self) -> str:  # the token itself never: this shows in logs and the call log
        return f"access token of {self.subject or 'nobody'} from {self.issuer}"


def unverified_claims(value: str) -> dict[str, Any] | None:
    """The claims of a compact JWS, not verified (to find its issuer); None when it is not one."""
    if len(value) > MAX_TOKEN_LENGTH or value.count(".") != 2:
        return None
    return _segment(value.split(".")[1])


def _header(value: str) -> dict[str, Any]:
    return _segment(value.split(".")[0]) or {}


def _segment(part: str) -> dict[str, Any] | None:
    """A base64url-encoded JSON object of a compact JWS, or None."""
    try:
        decoded = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    return decoded if isinstance(decoded, dict) else None


def verify(value: str, issuer: Issuer, keys: jwk.JWKSet, audiences: Iterable[str],
           now: float | None = None) -> ExternalAccessToken:
    """The verified token, or :class:`TokenRefused` (:class:`UnknownKey` for a key id not in ``keys``)."""
    now = time.time() if now is None else now
    claims = signed_claims.get(issuer, value, keys, now)
    if claims is None:
        claims = _signed_claims(value, issuer, keys)
        signed_claims.put(issuer, value, keys, claims, now)
    # Checked on every use, the cached ones too: time passes, and the audience is the request's.
    check_claims(claims, issuer, audiences, now)
    subject = claims.get("sub")
    return ExternalAccessToken(issuer=issuer.issuer, subject=subject if isinstance(subject, str) else None,
                               scopes=scopes_of(claims), expires_at=float(claims["exp"]), claims=claims)


def _signed_claims(value: str, issuer: Issuer, keys: jwk.JWKSet) -> dict[str, Any]:
    """The claims of ``value`` once its algorithm, signature and type are checked; :class:`TokenRefused` if not."""
    algorithm = _header(value).get("alg")
    if algorithm not in issuer.algorithms:
        # "none", HS256 keyed with the issuer's public key…: refused before any key is looked at.
        raise TokenRefused("the token's algorithm is not one this server accepts from its issuer")
    try:
        token = jwt.JWT(jwt=value, key=keys, algs=list(issuer.algorithms), check_claims=False, expected_type="JWS")
    except JWKeyNotFound:
        # jwcrypto says the same for a key id the set lacks and for a key that does not verify.
        kid = _header(value).get("kid")
        if isinstance(kid, str) and keys.get_key(kid) is not None:
            raise TokenRefused("the token's signature does not verify") from None
        raise UnknownKey("the token is signed with a key the issuer does not publish") from None
    except (JWException, ValueError, TypeError, KeyError):
        # A forged or altered signature, an algorithm not allowed (none, HS256 with a public key…).
        raise TokenRefused("the token's signature does not verify") from None
    if issuer.token_type is not None and str(token.token.jose_header.get("typ", "")).lower() not in (
            issuer.token_type.lower(), f"application/{issuer.token_type.lower()}"):
        raise TokenRefused(f"the token is not of type {issuer.token_type}")
    try:
        claims = json.loads(token.claims)
    except ValueError:
        raise TokenRefused("the token's claims are not JSON") from None
    if not isinstance(claims, dict):
        raise TokenRefused("the token's claims are not a JSON object")
    return claims


class SignedClaims:
    """
    Claims whose signature this worker checked, by (issuer, the token's SHA-256), for at most
    ``SECONDS`` and only against the key set they were checked with: a client sends the same token
    with every request until it expires, and an RSA signature check cost a request more than its
    user's lookup. Never past the token's ``exp`` (``check_claims`` runs on every use anyway); at
    most ``SIZE`` entries, the oldest dropped first.
    """

    SECONDS = 300.0
    SIZE = 10_000

    def __init__(self) -> None:
        # (until, the key set that checked it, the claims): holding the set, not its id, which a
        # later set could be given once this one is gone.
        self.entries: OrderedDict[tuple[str, str], tuple[float, jwk.JWKSet, dict[str, Any]]] = OrderedDict()

    def get(self, issuer: Issuer, value: str, keys: jwk.JWKSet, now: float) -> dict[str, Any] | None:
        key = (issuer.issuer, hashlib.sha256(value.encode("utf-8")).hexdigest())
        entry = self.entries.get(key)
        if entry is None or entry[0] <= now or entry[1] is not keys:
            return None
        return entry[2]

    def put(self, issuer: Issuer, value: str, keys: jwk.JWKSet, claims: dict[str, Any], now: float) -> None:
        expires = claims.get("exp")
        until = now + self.SECONDS
        if isinstance(expires, (int, float)) and not isinstance(expires, bool):
            until = min(until, float(expires) + issuer.leeway)
        key = (issuer.issuer, hashlib.sha256(value.encode("utf-8")).hexdigest())
        self.entries[key] = (until, keys, claims)
        self.entries.move_to_end(key)
        while len(self.entries) > self.SIZE:
            self.entries.popitem(last=False)


#: The worker's checked signatures.
signed_claims = SignedClaims()


def check_claims(claims: Mapping[str, Any], issuer: Issuer, audiences: Iterable[str], now: float) -> None:
    """``iss``, ``exp``, ``nbf`` and ``aud`` as RFC 9068 section 4 asks; :class:`TokenRefused` if one fails."""
    if claims.get("iss") != issuer.issuer:
        raise TokenRefused("the token was issued by another server")
    expires = claims.get("exp")
    if not isinstance(expires, (int, float)) or isinstance(expires, bool):
        raise TokenRefused("the token has no expiry")
    if now > expires + issuer.leeway:
        raise TokenRefused("the token has expired")
    not_before = claims.get("nbf")
    if not_before is not None:
        if not isinstance(not_before, (int, float)) or isinstance(not_before, bool):
            raise TokenRefused("the token's nbf is not a time")
        if now + issuer.leeway < not_before:
            raise TokenRefused("the token is not valid yet")
    check_audience(claims.get("aud"), audiences)


def check_audience(audience: Any, audiences: Iterable[str]) -> None:
    """
    ``aud`` (a string or a list, RFC 7519 4.1.3) names one of ``audiences``, trailing slashes
    aside; :class:`TokenRefused` if not, or if there is none (RFC 8707: bound to this server).
    """
    named = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
    wanted = {uri.rstrip("/") for uri in audiences}
    if not any(isinstance(uri, str) and uri.rstrip("/") in wanted for uri in named):
        raise TokenRefused("the token is meant for another resource")


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """``scope`` (space-separated, RFC 9068 2.2.3) or ``scp`` (a list or a string, as Entra ID and Okta send it)."""
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            return frozenset(value.split())
        if isinstance(value, list):
            return frozenset(item for item in value if isinstance(item, str))
    return frozenset()


__all__ = ["ExternalAccessToken", "MAX_TOKEN_LENGTH", "SignedClaims", "TokenRefused", "UnknownKey", "check_audience",
           "check_claims",
           "scopes_of", "signed_claims", "unverified_claims", "verify"]
