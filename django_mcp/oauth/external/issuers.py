"""The outside authorization servers this server trusts, as ``OAUTH_EXTERNAL_ISSUERS`` names them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...conf import mcp_settings

#: Signature algorithms an issuer may use unless it names its own: asymmetric only. A symmetric one
#: (HS256) would need the issuer's secret here, and "none" is no signature at all (RFC 8725 3.1).
DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")
ASYMMETRIC_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
                                   "ES256K", "EdDSA"})
#: Claims a user may be found by, besides ``sub`` (a stored link, ``ExternalIdentity``);
#: ``username`` is what RFC 7662 introspection answers name it.
USER_CLAIMS = frozenset({"sub", "email", "preferred_username", "username"})


@dataclass(frozen=True)
class Issuer:
    """
    One trusted authorization server. ``issuer``: its identifier, exactly the tokens' ``iss``;
    ``jwks_uri``: where its keys are (None: discovered from its metadata); ``algorithms``: the
    signature algorithms accepted; ``audience``: what a token's ``aud`` must name (None: this
    server's resource URLs, RFC 8707); ``user_claim``: ``sub`` (a stored link to a user),
    ``email`` or ``preferred_username`` (a user with that email or username); ``create_users``:
    make a user for a subject not known yet; ``leeway``: seconds of clock skew allowed for
    ``exp`` and ``nbf``; ``token_type``: a JOSE ``typ`` the token must declare (``"at+jwt"`` for
    issuers that follow RFC 9068), None to accept any. For opaque tokens, ``client_id`` and
    ``client_secret`` are this server's credentials at the issuer's RFC 7662 introspection
    endpoint (``introspection_endpoint``, else discovered), whose answers are kept at most
    ``introspection_cache_seconds`` (and never past the token's ``exp``).
    """

    issuer: str
    jwks_uri: str | None = None
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    audience: tuple[str, ...] | None = None
    user_claim: str = "sub"
    create_users: bool = False
    leeway: int = 30
    token_type: str | None = None
    introspection_endpoint: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    introspection_cache_seconds: float = 60.0

    @property
    def introspects(self) -> bool:
        """Whether opaque tokens are asked about at the issuer's RFC 7662 endpoint (it has credentials for it)."""
        return self.client_id is not None

    @classmethod
    def from_setting(cls, value: Mapping[str, Any]) -> Issuer:
        """An issuer from one entry of ``OAUTH_EXTERNAL_ISSUERS`` (the system check reports bad ones)."""
        audience = value.get("audience")
        if isinstance(audience, str):
            audience = (audience,)
        return cls(issuer=str(value["issuer"]), jwks_uri=value.get("jwks_uri"),
                   algorithms=tuple(value.get("algorithms") or DEFAULT_ALGORITHMS),
                   audience=tuple(audience) if audience else None, user_claim=value.get("user_claim", "sub"),
                   create_users=bool(value.get("create_users", False)), leeway=int(value.get("leeway", 30)),
                   token_type=value.get("token_type"), introspection_endpoint=value.get("introspection_endpoint"),
                   client_id=value.get("client_id"), client_secret=value.get("client_secret"),
                   introspection_cache_seconds=float(value.get("introspection_cache_seconds", 60.0)))


_cache: tuple[Any, dict[str, Issuer]] | None = None


def trusted_issuers() -> dict[str, Issuer]:
    """``iss`` → :class:`Issuer`, for every well-formed entry of the setting (made again when it changes)."""
    global _cache
    configured = mcp_settings.OAUTH_EXTERNAL_ISSUERS
    if _cache is None or _cache[0] is not configured:
        issuers = {}
        for value in configured or []:
            if isinstance(value, Mapping) and isinstance(value.get("issuer"), str):
                issuer = Issuer.from_setting(value)
                issuers[issuer.issuer] = issuer
        _cache = (configured, issuers)
    return _cache[1]


#: The keys an entry of OAUTH_EXTERNAL_ISSUERS may have (the system check reports others).
SETTING_KEYS = frozenset({"issuer", "jwks_uri", "algorithms", "audience", "user_claim", "create_users", "leeway",
                          "token_type", "introspection_endpoint", "client_id", "client_secret",
                          "introspection_cache_seconds"})


__all__ = ["ASYMMETRIC_ALGORITHMS", "DEFAULT_ALGORITHMS", "Issuer", "SETTING_KEYS", "USER_CLAIMS", "trusted_issuers"]
