"""
The MCP Registry's ``server.json`` for a site, made from its Server Card: the document a publisher
sends to https://registry.modelcontextprotocol.io with the registry's ``mcp-publisher`` tool.

The format is the registry's, not the card's (modelcontextprotocol/registry,
``docs/reference/server-json/schema.ts``, ``ServerDetail``, whose published schema is dated
2025-12-11, and ``official-registry-requirements.md``). The card is close to a subset of it (the
Server Card working group keeps it so), with three differences handled here: a ``server.json``
names its own schema, its icons must be ``https://`` URLs of at most 255 characters with one of five
media types, and its remotes carry no ``supportedProtocolVersions``. It may also list packages to
install, which a card never does.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..backend import package_version


#: The ``$schema`` of a ``server.json`` (schema.ts, ``ServerDetail.$schema``).
SERVER_JSON_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
#: ``Icon.mimeType`` of ``server.json`` is one of these (schema.ts, ``Icon``).
ICON_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/jpg", "image/svg+xml", "image/webp"})
ICON_SRC_MAX_LENGTH = 255
#: The only ``_meta`` key the official registry keeps (official-registry-requirements.md).
PUBLISHER_META = "io.modelcontextprotocol.registry/publisher-provided"
#: Forges whose repository the registry knows by name (``Repository.source``).
FORGES = {"github.com": "github", "gitlab.com": "gitlab"}
#: What a remote of ``server.json`` may carry (schema.ts, ``StreamableHttpTransport``,
#: ``SseTransport``, ``RemoteTransport``).
REMOTE_KEYS = ("type", "url", "headers", "variables")


def registry_icons(icons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The icons ``server.json`` accepts: ``https://`` sources of at most 255 characters, known media types."""
    kept = []
    for icon in icons:
        src = icon.get("src", "")
        if not src.startswith("https://") or len(src) > ICON_SRC_MAX_LENGTH:
            continue  # a data: URI or a plain http:// address: fine on the card, refused by the registry
        if "mimeType" in icon and icon["mimeType"] not in ICON_MEDIA_TYPES:
            continue
        kept.append(dict(icon))
    return kept


def repository(url: str, *, source: str | None = None, subfolder: str | None = None) -> dict[str, Any]:
    """A ``Repository`` (schema.ts): ``source`` defaults to the forge of ``url`` (``github``, ``gitlab``)."""
    host = (urlsplit(url).hostname or "").lower()
    result: dict[str, Any] = {"url": url, "source": source or FORGES.get(host, host or "git")}
    if subfolder:
        result["subfolder"] = subfolder.strip("/")
    return result


def pypi_package(identifier: str, version: str) -> dict[str, Any]:
    """
    A ``Package`` installed from PyPI and started over stdio with ``uvx`` (schema.ts, ``Package``;
    the registry checks the package's README names the server: ``mcp-name: <name>``).
    """
    return {"registryType": "pypi", "registryBaseUrl": "https://pypi.org", "identifier": identifier,
            "version": version, "runtimeHint": "uvx", "transport": {"type": "stdio"}}


def server_json(card: dict[str, Any], *, packages: list[dict[str, Any]] | tuple[()] = (),
                remotes: bool = True) -> dict[str, Any]:
    """
    ``card`` (:meth:`~django_mcp.server_card.card.ServerCard.as_dict`) as a ``server.json``, with
    ``packages`` (:func:`pypi_package`) and, unless ``remotes`` is False, the card's remotes.
    """
    document: dict[str, Any] = {"$schema": SERVER_JSON_SCHEMA_URL}
    for key in ("name", "title", "description", "version", "websiteUrl", "repository"):
        if key in card:
            document[key] = card[key]
    icons = registry_icons(card.get("icons", []))
    if icons:
        document["icons"] = icons
    if packages:
        document["packages"] = [dict(package) for package in packages]
    if remotes and card.get("remotes"):
        document["remotes"] = [{key: remote[key] for key in REMOTE_KEYS if key in remote}
                               for remote in card["remotes"]]
    # Which tool wrote the file: the one key of _meta the official registry keeps.
    document["_meta"] = {PUBLISHER_META: {"tool": "django-mcpkit", "version": package_version()}}
    return document
