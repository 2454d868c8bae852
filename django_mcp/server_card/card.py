"""
The Server Card of a site, as a dict ready for JSON (SEP-2127; the members are those of
``ServerCard`` in ``schema.ts`` of modelcontextprotocol/experimental-ext-server-card, commit
``8924e086``, 2026-07-24)::

    from django_mcp.server_card.card import ServerCard

    ServerCard().as_dict("https://mcp.example.com")
    # {"$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
    #  "name": "com.example.mcp/library", "version": "1.4.0", "description": "…",
    #  "remotes": [{"type": "streamable-http", "url": "https://mcp.example.com/mcp",
    #               "supportedProtocolVersions": ["2026-07-28", "2025-11-25", …]}, …]}

Identity comes from the site's own ``serverInfo`` (:meth:`~django_mcp.backend.SiteBackend.server_info`),
so the card agrees with what a connected client is told, as the draft asks ("Consistency with
Runtime Behavior", docs/discovery.md). The card names no tool, resource or prompt: the draft leaves
primitives to the protocol's list operations, which ask each client's permissions. Nothing in it
depends on who asks: every request, signed in or not, gets the same document.
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..conf import mcp_settings
from ..public_urls import base_url_from_request, configured_base_url
from ..protocol.versions import ALL_VERSIONS, LEGACY_VERSIONS


if TYPE_CHECKING:
    from django.http import HttpRequest

    from ..sites import McpSite

#: The media type of a Server Card (docs/discovery.md, "MCP Server Cards").
MEDIA_TYPE = "application/mcp-server-card+json"
#: The only ``$schema`` the draft accepts (schema.ts, ``ServerCard.$schema``; versioned by ``v1``, not by date).
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
#: Appended to the Streamable HTTP endpoint's URL: the one location the draft reserves for the card
#: (docs/discovery.md, "Hosted Server Card Location"), not a ``.well-known`` path.
CARD_SUFFIX = "server-card"
#: ``ServerCard.name`` (schema.ts): reverse-DNS namespace, one slash, then the server's own name.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
NAME_MAX_LENGTH = 200
#: ``description`` and ``title`` are 1 to 100 characters (schema.ts).
TEXT_MAX_LENGTH = 100


def public_base_url(request: HttpRequest | None = None) -> str | None:
    """
    The scheme and host clients reach the server at: ``DJANGO_MCP["PUBLIC_BASE_URL"]``, else the
    request's own (fine in development only, behind no proxy), else None.
    """
    return base_url_from_request(request) if request is not None else configured_base_url()


def endpoint_url(base_url: str, path: str) -> str:
    """``base_url`` joined with an endpoint path such as ``mcp`` or ``/staff/mcp/``."""
    return base_url.rstrip("/") + "/" + path.strip("/")


def shorten(text: str, limit: int = TEXT_MAX_LENGTH) -> str:
    """``text`` on one line, cut at a word with an ellipsis when it is longer than ``limit``."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if text[limit - 1] != " " and " " in cut[limit // 2:]:  # a word is cut: drop it
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.") + "…"


def reverse_dns(hostname: str) -> str:
    """``mcp.example.com`` → ``com.example.mcp``; an IP address stays as it is (``:`` becomes ``-``)."""
    hostname = hostname.strip("[]").lower() or "localhost"
    try:
        ipaddress.ip_address(hostname)
    except ValueError:
        hostname = ".".join(reversed(hostname.split(".")))
    return re.sub(r"[^a-z0-9.-]+", "-", hostname).strip("-.") or "localhost"


def card_name(server_name: str, base_url: str) -> str:
    """
    A name of the card's pattern (schema.ts, ``ServerCard.name``). ``SERVER_NAME`` is kept when it
    already is one (``com.example/library``); otherwise it goes under the public host, reversed
    (``django-mcp`` at ``https://mcp.example.com`` → ``com.example.mcp/django-mcp``), which is also
    the namespace the MCP Registry lets a server at that host publish under.
    """
    if NAME_PATTERN.match(server_name) and len(server_name) <= NAME_MAX_LENGTH:
        return server_name
    namespace = reverse_dns(urlsplit(base_url).hostname or "")
    local = re.sub(r"[^a-zA-Z0-9._-]+", "-", server_name).strip("-") or "mcp"
    return f"{namespace}/{local}"[:NAME_MAX_LENGTH]


class ServerCard:
    """
    Builds the Server Card of a site. Every attribute may be set on a subclass or passed to the
    constructor (``ServerCard(site=staff_site, endpoint="staff/mcp")``); :meth:`as_dict` makes
    the document for a public base URL.

    - ``site``: the :class:`~django_mcp.sites.McpSite` described; None: ``DJANGO_MCP["SITE"]``.
    - ``endpoint``: the path of its Streamable HTTP endpoint; None: ``DJANGO_MCP["MCP_PATH"]``,
      and then the 2024-11-05 HTTP+SSE endpoint (``SSE_PATH``) is listed too, unless that setting
      is None.
    - ``name``: the card's reverse-DNS name; None: from ``SERVER_NAME`` (:func:`card_name`).
    - ``repository``: ``{"url": …, "source": "github", "subfolder": …}`` (schema.ts,
      ``Repository``), or None.
    - ``headers``: the HTTP headers a client sends on every remote, as ``KeyValueInput`` dicts
      (``{"name": "X-Api-Key", "isRequired": True, "isSecret": True}``), for a project whose
      clients log in with a static key. OAuth needs none: a client learns it from the endpoint's
      401 and its RFC 9728 metadata (MCP spec 2025-11-25, basic/authorization).
    - ``meta``: the card's ``_meta``, namespaced vendor data, or None.
    """

    site: McpSite | None = None
    endpoint: str | None = None
    name: str | None = None
    repository: dict[str, Any] | None = None
    headers: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None

    def __init__(self, **options: Any) -> None:
        for key, value in options.items():
            if key.startswith("_") or not hasattr(type(self), key) or callable(getattr(type(self), key)):
                raise TypeError(f"ServerCard() got an unexpected keyword argument {key!r}")
            setattr(self, key, value)

    def get_site(self) -> McpSite:
        from ..sites import get_default_site

        return self.site if self.site is not None else get_default_site()

    def as_dict(self, base_url: str) -> dict[str, Any]:
        """The card for a server reached at ``base_url`` (``https://mcp.example.com``)."""
        info = self.get_site().server_info()
        card: dict[str, Any] = {
            "$schema": SCHEMA_URL,
            "name": self.name or card_name(str(info["name"]), base_url),
            "version": str(info["version"])[:255],
            "description": self.get_description(info),
        }
        if info.get("title"):
            card["title"] = shorten(str(info["title"]))
        if info.get("websiteUrl"):
            card["websiteUrl"] = info["websiteUrl"]
        if self.repository:
            card["repository"] = dict(self.repository)
        if info.get("icons"):
            card["icons"] = info["icons"]
        card["remotes"] = self.get_remotes(base_url)
        if self.meta:
            card["_meta"] = dict(self.meta)
        return card

    def get_description(self, info: dict[str, Any]) -> str:
        """
        ``serverInfo.description``, else its title, else a sentence from its name: the card must
        have a description of 1 to 100 characters, while ``SERVER_DESCRIPTION`` may be unset or long.
        """
        text = str(info.get("description") or info.get("title") or "").strip()
        return shorten(text or f"The MCP server {info['name']}.")

    def get_remotes(self, base_url: str) -> list[dict[str, Any]]:
        """
        One ``Remote`` per transport the endpoint serves (schema.ts, ``Remote``), each with the
        revisions it speaks, newest first as ``server/discover`` lists them: the Streamable HTTP
        endpoint every revision ``server/discover`` names, the 2024-11-05 HTTP+SSE pair the
        revisions its ``initialize`` negotiates.
        """
        endpoint = self.endpoint if self.endpoint is not None else mcp_settings.MCP_PATH
        remotes = [{"type": "streamable-http", "url": endpoint_url(base_url, endpoint),
                    "supportedProtocolVersions": list(reversed(ALL_VERSIONS))}]
        if self.endpoint is None and mcp_settings.SSE_PATH:
            remotes.append({"type": "sse", "url": endpoint_url(base_url, mcp_settings.SSE_PATH),
                            "supportedProtocolVersions": list(reversed(LEGACY_VERSIONS))})
        if self.headers:
            for remote in remotes:
                remote["headers"] = [dict(header) for header in self.headers]
        return remotes
