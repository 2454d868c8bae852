"""
The outside issuer's token parsers fuzzed (``django_mcp.oauth.external.access_tokens``): random
bearer values, and compact JWS whose header (``alg``, ``kid``, ``typ``) and claims (``iss``,
``aud``, ``exp``, ``nbf``, ``scope``…) are drawn at random, signed by the issuer's key, by another
key, with HMAC keyed by the issuer's public key, or not at all.

Invariant: ``unverified_claims`` never raises; ``verify`` returns a token or raises
``TokenRefused``, nothing else; a token is accepted only when the issuer's own key signed it with
an algorithm the issuer is trusted with and every claim holds — a forged one never.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jwcrypto import jwk, jwt

from django_mcp.oauth.external.access_tokens import TokenRefused, unverified_claims, verify
from django_mcp.oauth.external.issuers import Issuer

from .counting import count
from .profiles import fuzz_settings

ISSUER = Issuer(issuer="https://idp.example", algorithms=("RS256", "ES256"))
AUDIENCE = "https://mcp.example/mcp"
REAL = jwk.JWK.generate(kty="RSA", size=2048, kid="real")
OTHER = jwk.JWK.generate(kty="RSA", size=2048, kid="real")
KEYS = jwk.JWKSet()
KEYS.add(REAL)
NOW = 1_900_000_000  # a fixed clock: expiry is decided by the drawn claims, not by when the suite runs

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3), max_leaves=8)
times = st.one_of(st.integers(NOW - 1000, NOW + 1000), st.floats(allow_nan=False, allow_infinity=False), json_values)
claims_strategy = st.fixed_dictionaries({}, optional={
    "iss": st.sampled_from([ISSUER.issuer, "https://evil.example", ""]) | json_values,
    "aud": st.sampled_from([AUDIENCE, [AUDIENCE, "x"], "https://other.example"]) | json_values,
    "exp": times, "nbf": times, "sub": st.text(max_size=10) | json_values,
    "scope": st.text(max_size=20) | json_values, "scp": json_values,
})
headers = st.fixed_dictionaries({"alg": st.sampled_from(["RS256", "ES256", "HS256", "none", "PS256", "RS512"])
                                 | st.text(max_size=6)},
                                optional={"kid": st.sampled_from(["real", "gone"]) | json_values,
                                          "typ": st.sampled_from(["at+jwt", "JWT"]) | json_values})


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hand_made(header: dict[str, Any], claims: dict[str, Any], how: str) -> str:
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    if how == "hmac-public":
        signature = hmac.new(REAL.export_to_pem(), signing_input.encode(), hashlib.sha256).digest()
    elif how == "garbage":
        signature = b"\x00" * 256
    else:
        signature = b""
    return f"{signing_input}.{b64(signature)}"


def signed(header: dict[str, Any], claims: dict[str, Any], key: jwk.JWK) -> str | None:
    if header.get("alg") not in ("RS256", "PS256", "RS512"):
        return None  # an RSA key signs these only
    token = jwt.JWT(header=header, claims=claims)
    try:
        token.make_signed_token(key)
    except Exception:  # a header jwcrypto will not sign (an odd typ): nothing to test with it
        return None
    return token.serialize()


def holds(claims: dict[str, Any]) -> bool:
    """Whether the claims pass the checks, by the rules written out again plainly."""
    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    audience = claims.get("aud")
    named = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
    return (claims.get("iss") == ISSUER.issuer and number(claims.get("exp")) and NOW <= claims["exp"] + ISSUER.leeway
            and ("nbf" not in claims or claims["nbf"] is None
                 or (number(claims["nbf"]) and NOW + ISSUER.leeway >= claims["nbf"]))
            and AUDIENCE in named)


@fuzz_settings("tokens")
@given(raw=st.text(max_size=200) | st.binary(max_size=200).map(lambda data: data.decode("latin-1")),
       header=headers, claims=claims_strategy,
       how=st.sampled_from(["real", "other", "hmac-public", "unsigned", "garbage"]))
def test_no_forged_token_is_accepted_and_nothing_but_a_refusal_escapes(raw, header, claims, how) -> None:
    count("tokens")
    unverified_claims(raw)
    try:
        verify(raw, ISSUER, KEYS, [AUDIENCE], now=NOW)
    except TokenRefused:
        pass
    else:
        raise AssertionError(f"accepted a random value: {raw!r}")

    if how in ("real", "other"):
        token = signed(header, claims, REAL if how == "real" else OTHER)
        if token is None:
            return
    else:
        token = hand_made(header, claims, how)
    assert unverified_claims(token) is None or isinstance(unverified_claims(token), dict)
    try:
        accepted = verify(token, ISSUER, KEYS, [AUDIENCE], now=NOW)
    except TokenRefused:
        accepted = None
    genuine = (how == "real" and header.get("alg") == "RS256" and header.get("kid") in ("real", None)
               and holds(claims))
    if accepted is not None:
        assert genuine, (header, claims, how)
    elif genuine:
        raise AssertionError(f"refused a genuine token: {header} {claims}")

