"""
Protocol revisions and the two eras they fall into.

The *legacy* era negotiates a version once with ``initialize`` (2024-11-05 … 2025-11-25); the
*modern* era (2026-07-28) carries the version on every request in ``_meta`` (MCP spec 2026-07-28, basic/versioning).
"""

from enum import Enum

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS


LEGACY_VERSIONS: tuple[str, ...] = tuple(HANDSHAKE_PROTOCOL_VERSIONS)
MODERN_VERSIONS: tuple[str, ...] = tuple(MODERN_PROTOCOL_VERSIONS)
ALL_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS + MODERN_VERSIONS
LATEST_LEGACY_VERSION = LEGACY_VERSIONS[-1]
LATEST_MODERN_VERSION = MODERN_VERSIONS[-1]
# What a request without any version hint is taken to speak (2025-06-18 transport rules).
DEFAULT_LEGACY_VERSION = "2025-03-26"

# Reserved ``_meta`` keys of 2026-07-28 (MCP spec 2026-07-28, basic#messages).
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


class Era(str, Enum):
    """How a client talks to us: with a negotiated session, or statelessly per request."""

    LEGACY = "legacy"
    MODERN = "modern"


def era_of(version: str) -> Era:
    """The era a known protocol version belongs to."""
    return Era.MODERN if version in MODERN_VERSIONS else Era.LEGACY


def negotiate_legacy_version(requested: object) -> str:
    """
    Pick the version to answer ``initialize`` with (MCP spec 2025-11-25,
    basic/lifecycle#initialization): the client's if we speak it, else our latest handshake
    version. A modern version cannot be chosen through ``initialize``.
    """
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY_VERSION


def at_least(version: str, minimum: str) -> bool:
    """True when ``version`` is a known revision no older than ``minimum``."""
    if version not in ALL_VERSIONS:
        return False
    return ALL_VERSIONS.index(version) >= ALL_VERSIONS.index(minimum)
