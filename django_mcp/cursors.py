"""
Pagination cursors (MCP spec 2025-11-25, server/utilities/pagination): opaque to clients, signed
here with Django's signing (keys from ``SECRET_KEY``), so a cursor a client made up or altered is
``-32602`` rather than a position we would trust.
"""

from typing import Any

from django.core import signing

from .protocol.errors import InvalidParams


SALT = "django_mcp.cursor"


def encode_cursor(payload: Any) -> str:
    """An opaque cursor for ``payload`` (JSON-able: where the next page starts)."""
    return signing.dumps(payload, salt=SALT)


def decode_cursor(cursor: str) -> Any:
    """The payload of a cursor we minted; anything else is ``InvalidParams``."""
    try:
        return signing.loads(cursor, salt=SALT)
    except (signing.BadSignature, ValueError, TypeError):
        raise InvalidParams("Invalid cursor", {"cursor": cursor}) from None
