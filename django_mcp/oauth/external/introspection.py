"""
Opaque access tokens of an outside authorization server, asked about at its RFC 7662
introspection endpoint (this server authenticating with ``client_secret_basic``, RFC 7662
section 2.1), on the thread pool. An answer is kept, by the token's SHA-256, at most the issuer's
``introspection_cache_seconds`` and never past the token's ``exp``; an inactive answer a few
seconds, so a flood of made-up tokens does not become a flood of requests to the issuer. At most
``CACHE_SIZE`` answers are kept. A token revoked at the issuer is therefore refused here within
``introspection_cache_seconds`` of its revocation.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlencode

from ...threads import in_thread
from .access_tokens import ExternalAccessToken, TokenRefused, check_audience, scopes_of
from .issuers import Issuer
from .keys import discover, fetch_json

#: Answers kept at most (the oldest go first).
CACHE_SIZE = 10_000
#: Seconds an inactive answer is kept.
INACTIVE_SECONDS = 5.0


class Introspections:
    """The worker's introspection answers: (issuer, token digest) → (kept until, answer)."""

    def __init__(self) -> None:
        self.answers: OrderedDict[tuple[str, str], tuple[float, dict[str, Any]]] = OrderedDict()

    async def answer(self, issuer: Issuer, value: str) -> dict[str, Any]:
        """What the issuer says of ``value`` (a dict with ``active``), from the cache while it holds."""
        key = (issuer.issuer, hashlib.sha256(value.encode("utf-8")).hexdigest())
        now = time.time()
        kept = self.answers.get(key)
        if kept is not None and kept[0] > now:
            self.answers.move_to_end(key)
            return kept[1]
        answer = await introspect(issuer, value)
        until = now + (issuer.introspection_cache_seconds if answer.get("active") is True else INACTIVE_SECONDS)
        expires = answer.get("exp")
        if isinstance(expires, (int, float)) and not isinstance(expires, bool):
            until = min(until, float(expires))
        self.answers[key] = (until, answer)
        self.answers.move_to_end(key)
        while len(self.answers) > CACHE_SIZE:
            self.answers.popitem(last=False)
        return answer


@in_thread
def introspect(issuer: Issuer, value: str) -> dict[str, Any]:
    """The issuer's RFC 7662 answer for ``value`` (on a worker thread)."""
    endpoint = issuer.introspection_endpoint or discover(issuer.issuer, "introspection_endpoint")
    # RFC 6749 section 2.3.1: the credentials form-encoded, then joined and base64-encoded.
    credentials = f"{quote(issuer.client_id or '', safe='')}:{quote(issuer.client_secret or '', safe='')}"
    headers = {"Authorization": "Basic " + base64.b64encode(credentials.encode()).decode(),
               "Content-Type": "application/x-www-form-urlencoded"}
    body = urlencode({"token": value, "token_type_hint": "access_token"}).encode()
    return fetch_json(endpoint, data=body, headers=headers)


def token_from_answer(answer: dict[str, Any], issuer: Issuer, audiences: Iterable[str],
                      now: float | None = None) -> ExternalAccessToken:
    """The token an active answer describes, or :class:`TokenRefused` (RFC 7662 section 2.2)."""
    now = time.time() if now is None else now
    if answer.get("active") is not True:
        raise TokenRefused("the issuer says the token is not active")
    if "iss" in answer and answer["iss"] != issuer.issuer:
        raise TokenRefused("the token was issued by another server")
    expires = answer.get("exp")
    if isinstance(expires, (int, float)) and not isinstance(expires, bool) and now > expires + issuer.leeway:
        raise TokenRefused("the token has expired")
    check_audience(answer.get("aud"), audiences)
    subject = answer.get("sub")
    return ExternalAccessToken(issuer=issuer.issuer, subject=subject if isinstance(subject, str) else None,
                               scopes=scopes_of(answer),
                               expires_at=float(expires) if isinstance(expires, (int, float)) else None, claims=answer)


#: The worker's introspection answers.
introspections = Introspections()


__all__ = ["CACHE_SIZE", "INACTIVE_SECONDS", "Introspections", "introspect", "introspections", "token_from_answer"]
