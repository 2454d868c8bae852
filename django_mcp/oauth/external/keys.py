"""
Each trusted issuer's signing keys: its JWK Set (RFC 7517), found through its metadata (RFC 8414
``jwks_uri``, or OpenID Connect discovery) unless the setting names it, fetched on the thread pool
(never on the event loop), kept for ``MAX_AGE`` and shared by every request of the worker. A token
signed with a key id the set does not have fetches the set again — the issuer rotated its keys —
but no more often than every ``REFRESH_FLOOR`` seconds per issuer, so a stream of tokens with made-up
key ids cannot make this server hammer the issuer. Requests that need the keys while they are
being fetched wait for that one fetch.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.request
import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from jwcrypto import jwk
from jwcrypto.common import JWException

from ...threads import in_thread
from .issuers import Issuer

logger = logging.getLogger("django_mcp.oauth")

#: Seconds a fetched key set is used before it is fetched again.
MAX_AGE = 3600.0
#: Seconds, per issuer, between two fetches asked for by an unknown key id.
REFRESH_FLOOR = 30.0
#: Seconds a fetch of metadata or keys may take.
FETCH_TIMEOUT = 5.0
#: Bytes a metadata document or key set may have: larger is refused, not read.
MAX_DOCUMENT = 256 * 1024


class IssuerUnavailable(Exception):
    """The issuer could not be asked: its metadata, keys (none fetched before) or introspection answer could not be had."""


@dataclass
class _Fetched:
    keys: jwk.JWKSet
    at: float  # time.monotonic() of the fetch


class KeySets:
    """The key sets of the trusted issuers, for one worker."""

    def __init__(self) -> None:
        self.fetched: dict[str, _Fetched] = {}
        self._fetching: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Task[_Fetched]]] = (
            weakref.WeakKeyDictionary())

    async def keys(self, issuer: Issuer, *, unknown_key: bool = False) -> jwk.JWKSet:
        """
        The issuer's key set: the cached one while fresh, else fetched. ``unknown_key``: a token
        named a key id the cached set lacks, so fetch again if the floor allows.
        """
        have = self.fetched.get(issuer.issuer)
        now = time.monotonic()
        if have is not None:
            age = now - have.at
            if age < MAX_AGE and not (unknown_key and age >= REFRESH_FLOOR):
                return have.keys
        try:
            return (await self._fetch_once(issuer)).keys
        except (OSError, ValueError, IssuerUnavailable, JWException) as exc:  # unreachable, not JSON, not a key set
            if have is not None:
                # The issuer is away: the keys it served before still verify what they signed.
                logger.warning("Could not fetch the keys of %s again; using those fetched before: %s",
                               issuer.issuer, exc)
                return have.keys
            raise IssuerUnavailable(str(exc)) from exc

    async def _fetch_once(self, issuer: Issuer) -> _Fetched:
        loop = asyncio.get_running_loop()
        fetching = self._fetching.setdefault(loop, {})
        task = fetching.get(issuer.issuer)
        if task is None:
            task = fetching[issuer.issuer] = loop.create_task(self._fetch(issuer))
            task.add_done_callback(lambda done: fetching.pop(issuer.issuer, None))
        return await asyncio.shield(task)

    async def _fetch(self, issuer: Issuer) -> _Fetched:
        keys = await fetch_key_set(issuer)
        fetched = self.fetched[issuer.issuer] = _Fetched(keys, time.monotonic())
        return fetched


@in_thread
def fetch_key_set(issuer: Issuer) -> jwk.JWKSet:
    """The issuer's JWK Set, from ``jwks_uri`` or the one its metadata names (on a worker thread)."""
    uri = issuer.jwks_uri or discover_jwks_uri(issuer.issuer)
    return jwk.JWKSet.from_json(json.dumps(fetch_json(uri)))


def metadata_urls(issuer: str) -> list[str]:
    """
    Where an issuer's metadata may be: RFC 8414's ``/.well-known/oauth-authorization-server``
    inserted before the issuer's path (section 3.1), then OpenID Connect Discovery's
    ``/.well-known/openid-configuration`` appended to it (section 4), as MCP clients look
    (MCP spec 2025-11-25, basic/authorization, "Authorization Server Metadata Discovery").
    """
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    return [urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", "")),
            urlunsplit((parts.scheme, parts.netloc, f"{path}/.well-known/openid-configuration", "", ""))]


def discover_jwks_uri(issuer: str) -> str:
    """The ``jwks_uri`` of the first metadata document found whose ``issuer`` is ``issuer`` (RFC 8414 3.3)."""
    return discover(issuer, "jwks_uri")


def discover(issuer: str, member: str) -> str:
    """An endpoint (``member``) of the first metadata document found whose ``issuer`` is ``issuer``."""
    problems = []
    for url in metadata_urls(issuer):
        try:
            metadata = fetch_json(url)
        except Exception as exc:
            problems.append(f"{url}: {exc}")
            continue
        if metadata.get("issuer") != issuer:
            problems.append(f"{url}: names issuer {metadata.get('issuer')!r}")
            continue
        if not isinstance(metadata.get(member), str):
            problems.append(f"{url}: has no {member}")
            continue
        return metadata[member]
    raise IssuerUnavailable(f"no usable metadata for {issuer}: " + "; ".join(problems))


def fetch_json(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """
    A JSON object from ``url`` (POSTing ``data`` when given), at most ``MAX_DOCUMENT`` bytes,
    within ``FETCH_TIMEOUT``.
    """
    if urlsplit(url).scheme not in ("https", "http"):
        raise IssuerUnavailable(f"not an http(s) URL: {url}")
    request = urllib.request.Request(url, data=data, headers={"Accept": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:  # noqa: S310 - http(s) only, above
        body = response.read(MAX_DOCUMENT + 1)
    if len(body) > MAX_DOCUMENT:
        raise IssuerUnavailable(f"{url} is larger than {MAX_DOCUMENT} bytes")
    document = json.loads(body)
    if not isinstance(document, dict):
        raise IssuerUnavailable(f"{url} is not a JSON object")
    return document


#: The worker's key sets.
key_sets = KeySets()


__all__ = ["FETCH_TIMEOUT", "KeySets", "IssuerUnavailable", "MAX_AGE", "REFRESH_FLOOR", "discover", "discover_jwks_uri",
           "fetch_json", "fetch_key_set", "key_sets", "metadata_urls"]
