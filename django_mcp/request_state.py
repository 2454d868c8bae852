"""
Signed ``requestState`` for 2026-07-28 multi-round-trip requests (MCP spec 2026-07-28, basic/patterns/mrtr, SEP-2322): integrity
protected with Django's signing (keys from ``SECRET_KEY``), bound to the user and expiring, so the
retry may land on any worker and a tampered or foreign state is refused.
"""

from typing import Any

from django.core import signing

from .conf import mcp_settings
from .protocol.context import RequestContext
from .protocol.errors import InvalidParams
from .stores.sessions import user_key


SALT = "django_mcp.request_state"


class SignedStateCodec:
    """Encode and verify ``requestState`` tokens."""

    def encode(self, payload: dict[str, Any], ctx: RequestContext) -> str:
        return signing.dumps({**payload, "u": user_key(ctx.user)}, salt=SALT, compress=True)

    def decode(self, token: str, ctx: RequestContext) -> dict[str, Any]:
        try:
            payload = signing.loads(token, salt=SALT, max_age=mcp_settings.REQUEST_STATE_MAX_AGE_SECONDS)
        except signing.SignatureExpired:
            raise InvalidParams("requestState has expired; start the request again") from None
        except signing.BadSignature:
            raise InvalidParams("requestState failed verification") from None
        if not isinstance(payload, dict) or payload.get("u") != user_key(ctx.user):
            raise InvalidParams("requestState belongs to another user")
        return payload
