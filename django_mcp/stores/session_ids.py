"""
Signed session ids: a legacy session's immutable facts carried in its ``Mcp-Session-Id``.

What a session is — its negotiated version, the client's capabilities and info, the principal it
belongs to — never changes after ``initialize``. Signed with the project's ``SECRET_KEY``
(:mod:`django.core.signing`) and handed to the client as the session id, those facts let any
worker serve the session's requests before its row is written, and after a restart of the worker
that opened it. The spec allows any id of visible ASCII and names a JWT as an example of a secure
one (MCP spec 2025-11-25, basic/transports#session-management).

The id reads ``<key>.<signed facts>``: ``key``, 128 random bits as hex, is the session's name
everywhere inside the server (its row, its channel-layer groups, a worker's cache), and is signed
with the facts, so neither half can be swapped for another session's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core import signing

SALT = "django_mcp.session-id"
# Past this length a session is given a plain id and its row at once: proxies and servers limit
# header sizes (often 8 KiB for all of them), and a client's id must never be what breaks a request.
MAX_LENGTH = 1024


@dataclass(frozen=True)
class SignedFacts:
    """What a signed id says about its session; ``issued_at`` in seconds since the epoch."""

    key: str
    protocol_version: str
    user_key: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    issued_at: int


def sign(key: str, *, protocol_version: str, user_key: str, client_capabilities: dict[str, Any],
         client_info: dict[str, Any] | None, issued_at: int) -> str | None:
    """The session id carrying these facts, or None when it would be longer than ``MAX_LENGTH``."""
    facts = {"k": key, "v": protocol_version, "u": user_key, "c": client_capabilities, "i": client_info,
             "t": issued_at}
    session_id = f"{key}.{signing.Signer(salt=SALT).sign_object(facts, compress=True)}"
    return session_id if len(session_id) <= MAX_LENGTH else None


def is_signed(session_id: str) -> bool:
    """Whether ``session_id`` has the shape of a signed id (a plain one is hex only)."""
    return "." in session_id


def key_of(session_id: str) -> str:
    """The session's key: the whole of a plain id, the part before the first dot of a signed one."""
    return session_id.partition(".")[0]


def read(session_id: str) -> SignedFacts | None:
    """The facts of a signed id, or None when it is not one this project signed (or was altered)."""
    key, _, signed = session_id.partition(".")
    if not signed or len(session_id) > MAX_LENGTH:
        return None
    try:
        facts = signing.Signer(salt=SALT).unsign_object(signed)
    except (signing.BadSignature, ValueError):
        return None
    try:
        if facts["k"] != key:
            return None
        return SignedFacts(key=key, protocol_version=str(facts["v"]), user_key=str(facts["u"]),
                           client_capabilities=dict(facts["c"] or {}), client_info=facts["i"],
                           issued_at=int(facts["t"]))
    except (KeyError, TypeError, ValueError):
        return None


__all__ = ["MAX_LENGTH", "SignedFacts", "is_signed", "key_of", "read", "sign"]
