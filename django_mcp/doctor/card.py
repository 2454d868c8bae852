"""
The MCP Server Card (SEP-2127, an experimental extension; the draft of
modelcontextprotocol/experimental-ext-server-card at commit ``8924e086``, as
django_mcp/server_card/card.py follows it): a public JSON document at ``<endpoint URL>/server-card``
("Hosted Server Card Location", docs/discovery.md), served as ``application/mcp-server-card+json``,
readable from any origin ("CORS Requirements") and cacheable ("Caching"). Its ``remotes`` tell a
client where each transport is, so a card naming another address sends clients there.

The card is optional: a server without one is not checked further (``skip``), and clients connect
as they would without it.
"""

from __future__ import annotations

from typing import Any

from ..server_card.card import CARD_SUFFIX, MEDIA_TYPE  # the draft's location and type, as served here
from . import http
from .endpoint import redirect_finding
from .findings import Finding, fail, ok, skip, warn
from .http import same_resource
from .visit import FOREIGN_ORIGIN, Visit


#: What the doctor asks for: the card's own type first, plain JSON as the draft lets a host answer.
ACCEPT = f"{MEDIA_TYPE}, application/json"
TITLE = "Server Card (SEP-2127 draft)"
HOW_TO_SERVE = ('path("", include("django_mcp.server_card.urls")) in the root URLconf serves it (and the proxy '
                "must forward the path to Django)")


def card_url(visit: Visit) -> str:
    return visit.url.rstrip("/") + "/" + CARD_SUFFIX


def remotes_of(card: dict[str, Any], kind: str) -> list[str]:
    """The ``url`` of each remote of type ``kind`` (schema.ts, ``Remote``)."""
    remotes = card.get("remotes")
    if not isinstance(remotes, list):
        return []
    return [str(remote.get("url")) for remote in remotes
            if isinstance(remote, dict) and remote.get("type") == kind and remote.get("url")]


def check_server_card(visit: Visit) -> Finding:
    """GET the card anonymously, as a client does before it connects, from a page on any origin."""
    url = card_url(visit)
    # A browser sends its page's Origin; the draft wants the card readable from every one.
    origin = visit.origin or FOREIGN_ORIGIN
    try:
        response = http.request("GET", url, headers={"Accept": ACCEPT, "Origin": origin}, timeout=visit.timeout)
    except http.HttpError as error:
        return fail("server-card", TITLE, str(error), "Check the proxy.", fault="unreachable")
    if response.is_redirect:
        return redirect_finding("server-card", "The Server Card", response)
    if response.status == 404:
        return skip("server-card", TITLE, f"Not served (HTTP 404 at {url}): an optional, draft extension. "
                    f"{HOW_TO_SERVE}.")
    card = response.json() if response.status == 200 else None
    if not isinstance(card, dict):
        return fail("server-card", TITLE, f"HTTP {response.status}, {response.content_type or 'no Content-Type'}: "
                    f"{response.text(120)!r} is not a card: clients that read it learn nothing, or give up.",
                    f"Serve the card at {url} ({HOW_TO_SERVE}); something else answers there (a catch-all page, "
                    "a login, the proxy).", fault="card not JSON")
    # Kept even when it names another address: the SSE check then says why it does not follow it.
    visit.server_card = card
    streamable = remotes_of(card, "streamable-http")
    if not any(same_resource(remote, visit.url) for remote in streamable):
        named = ", ".join(streamable) or "no streamable-http remote"
        return fail("server-card", TITLE,
                    f"The card names {named}, but clients connect to {visit.url}: a client that follows the card "
                    "connects to another address.",
                    f'Set DJANGO_MCP["PUBLIC_BASE_URL"] = "{visit.origin_of_url}" (the address clients use; the '
                    "same cause as wrong public URL), or give clients the public URL.",
                    fault="card URL mismatch", remotes=streamable)
    return judge_headers(response, origin, card)


def judge_headers(response: http.Response, origin: str, card: dict[str, Any]) -> Finding:
    """Media type, caching (docs/discovery.md, "Caching") and CORS ("CORS Requirements") of a card that is right."""
    kinds = list(dict.fromkeys(str(remote.get("type")) for remote in card.get("remotes", [])
                               if isinstance(remote, dict)))
    seen = f"{response.content_type}, remotes: {', '.join(kinds)}"
    problems, fixes, faults = [], [], []
    if response.content_type not in (MEDIA_TYPE, "application/json"):
        problems.append(f"served as {response.content_type or 'no Content-Type'}")
        fixes.append(f"serve it as {MEDIA_TYPE}")
        faults.append("card not JSON")
    if not response.header("etag") and not response.header("cache-control"):
        problems.append("neither ETag nor Cache-Control: clients and caches fetch it again every time")
        fixes.append("send Cache-Control (public, max-age=3600) and an ETag, as django_mcp's view does; a proxy "
                     "may strip them")
        faults.append("card not cacheable")
    if response.header("access-control-allow-origin") not in (origin, "*"):
        problems.append(f"no Access-Control-Allow-Origin for Origin {origin}: a page (a web client, a registry "
                        "browser) cannot read it")
        fixes.append("send Access-Control-Allow-Origin: * (django_mcp's view does; a proxy may strip it)")
        faults.append("card CORS missing")
    if not problems:
        return ok("server-card", TITLE, seen)
    fix = "; ".join(fixes)
    return warn("server-card", TITLE, f"{seen}; " + "; ".join(problems) + ".", fix[0].upper() + fix[1:] + ".",
                fault=", ".join(faults))
