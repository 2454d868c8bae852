"""
The resource server for an outside authorization server (MCP spec 2025-11-25, basic/authorization):
a team's own identity provider (Keycloak, Okta, Entra ID, Auth0…) issues the access tokens, this
server checks them and says in its RFC 9728 metadata where clients get them.

- :mod:`.issuers`: the trusted issuers, from ``DJANGO_MCP["OAUTH_EXTERNAL_ISSUERS"]``;
- :mod:`.keys`: each issuer's signing keys (JWKS), discovered from its RFC 8414 or OpenID metadata,
  cached, fetched again for an unknown key id no more often than a floor allows;
- :mod:`.access_tokens`: a JWT access token verified (RFC 9068 where the issuer follows it);
- :mod:`.users`: the Django user a token's claims name;
- :mod:`.authentication`: :class:`ExternalTokenAuthentication`, the class to list.
"""

from .access_tokens import ExternalAccessToken, TokenRefused
from .authentication import ExternalTokenAuthentication
from .issuers import Issuer, trusted_issuers


__all__ = ["ExternalAccessToken", "ExternalTokenAuthentication", "Issuer", "TokenRefused", "trusted_issuers"]
